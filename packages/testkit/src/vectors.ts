import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The contract's exact examples, in `test/vectors/` of this repository (test/vectors/README.md). */
export const VECTORS_DIR = fileURLToPath(new URL('../../../test/vectors/', import.meta.url));

/** Parses one vector file of `test/vectors/`, e.g. `loadVector('payloads.json')`. */
export function loadVector<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(`${VECTORS_DIR}${name}`, 'utf8')) as T;
}
