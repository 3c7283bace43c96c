// The vectors in test/vectors/ must stay byte-identical to the contract's published copy. That copy
// is not part of the repository; when a checkout has it beside the repository (a folder `shared/vectors`
// next to the repository root), this test compares the two, otherwise it is skipped and says why.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { VECTORS_DIR } from '@sluice/testkit';
import { ROOT } from './code-facts.ts';

const UPSTREAM = join(ROOT, '..', 'shared', 'vectors');
const jsonFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

test('test/vectors holds the four vector files and each parses as JSON', () => {
  const files = jsonFiles(VECTORS_DIR);
  assert.deepEqual(files, ['payloads.json', 'signatures.json', 'snake_case.json', 'timestamps.json']);
  for (const f of files) assert.doesNotThrow(() => JSON.parse(readFileSync(join(VECTORS_DIR, f), 'utf8')), f);
});

test('test/vectors/*.json are byte-identical to the upstream vectors beside the repository', {
  skip: existsSync(UPSTREAM) ? false : `no upstream vectors at ${UPSTREAM}: nothing to compare with`,
}, () => {
  assert.deepEqual(jsonFiles(VECTORS_DIR), jsonFiles(UPSTREAM), 'the same vector files');
  for (const f of jsonFiles(UPSTREAM)) {
    const ours = readFileSync(join(VECTORS_DIR, f));
    assert.ok(ours.equals(readFileSync(join(UPSTREAM, f))), `test/vectors/${f} differs from ${join(UPSTREAM, f)}`);
  }
});
