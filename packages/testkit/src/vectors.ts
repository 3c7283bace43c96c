import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared contract vectors live beside the project: `../shared/vectors/` from the repo root. */
export function loadVector<T = unknown>(name: string): T {
  const path = fileURLToPath(new URL(`../../../../shared/vectors/${name}`, import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
