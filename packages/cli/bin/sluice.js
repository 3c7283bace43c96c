#!/usr/bin/env node
// The `sluice` command: loads tsx, then the TypeScript entry (the repo has no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
