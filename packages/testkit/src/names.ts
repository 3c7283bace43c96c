import { randomBytes } from 'node:crypto';

let counter = 0;

/** A name no other test (or earlier run) uses: topics and group ids per test. */
export function uniqueName(prefix = 't'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${randomBytes(3).toString('hex')}`;
}
