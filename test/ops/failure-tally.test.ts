// The test commands' tally (scripts/lib/run-tests.sh, scripts/lib/failure-tally.ts): a run with a
// failed test fails even when the runner itself ends with 0.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sluice-tally-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
// A runner of its own, not a child reporting to this one.
const { NODE_TEST_CONTEXT: _context, ...withoutTestContext } = process.env;
const tally = (testFile: string) => {
  const out = join(dir, `${Math.random()}.json`);
  const run = spawnSync(
    process.execPath,
    ['--test', '--test-reporter=./scripts/lib/failure-tally.ts', `--test-reporter-destination=${out}`, testFile],
    { cwd: ROOT, env: withoutTestContext },
  );
  return { status: run.status, tally: JSON.parse(spawnSync('cat', [out]).stdout.toString()) };
};
const tallyEnd = (rc: number, written: string) =>
  spawnSync(
    'bash',
    ['-c', `source scripts/lib/run-tests.sh; tally_begin; printf '%s' '${written}' > "$TALLY_FILE"; tally_end ${rc}`],
    { cwd: ROOT },
  ).status;

test('the tally counts failed tests, not todo or skipped ones', () => {
  const failing = file(
    'a.test.mjs',
    "import { it } from 'node:test';\nit('fails', () => { throw new Error('no'); });\nit('passes', () => {});\nit('todo', { todo: true }, () => { throw new Error('later'); });\nit('skipped', { skip: true }, () => {});\n",
  );
  assert.deepEqual(tally(failing), { status: 1, tally: { failed: 1, passed: 1 } });
  const passing = file('b.test.mjs', "import { it } from 'node:test';\nit('passes', () => {});\n");
  assert.deepEqual(tally(passing), { status: 0, tally: { failed: 0, passed: 1 } });
});

test("a run fails when the tally counts a failure or is missing, even when the runner's code is 0", () => {
  assert.equal(tallyEnd(0, '{"failed":0,"passed":3}\n'), 0);
  assert.equal(tallyEnd(0, '{"failed":2,"passed":3}\n'), 1, 'runner 0, two failed');
  assert.equal(tallyEnd(0, ''), 1, 'no tally written');
  assert.equal(tallyEnd(1, '{"failed":0,"passed":3}\n'), 1, "the runner's own failure stands");
});
