#!/usr/bin/env node
// The `sluice` command: the TypeScript entry runs through Node's built-in type stripping (Node 24+).
await import('../src/main.ts');
