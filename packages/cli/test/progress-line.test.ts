import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CliIo } from '../src/io.ts';
import { ProgressLine, progressText } from '../src/progress-line.ts';

function io(stderrIsTerminal: boolean): { io: CliIo; err: string[] } {
  const err: string[] = [];
  return {
    err,
    io: {
      stdout: () => {},
      stderr: (t) => void err.push(t),
      readStdin: async () => Buffer.alloc(0),
      env: {},
      stderrIsTerminal,
    },
  };
}

test('progress line: drawn in place, at most every 200 ms, erased by clear (which does not hurry the next draw)', () => {
  let now = 1_000;
  const { io: terminal, err } = io(true);
  const line = new ProgressLine(terminal, () => now);
  line.update(() => 'a');
  now += 199;
  line.update(() => 'b');
  now += 1;
  line.update(() => 'c');
  line.clear();
  line.clear();
  line.update(() => 'd');
  now += 200;
  line.update(() => 'e');
  assert.deepEqual(err, ['\ra\x1b[K', '\rc\x1b[K', '\r\x1b[K', '\re\x1b[K']);
});

test('progress line: nothing at all when stderr is not a terminal, and the text is never built', () => {
  const { io: pipe, err } = io(false);
  const line = new ProgressLine(pipe);
  line.update(() => assert.fail('built the text for a pipe'));
  line.clear();
  assert.deepEqual(err, []);
});

test('progress text: counts with separators and a floored percentage; an empty read is 100 %', () => {
  assert.equal(
    progressText('dead letters', 4_599, 10_000, ', 3 matched'),
    'reading dead letters: 4,599 of 10,000 records (45%), 3 matched',
  );
  assert.equal(progressText('replay markers', 0, 0), 'reading replay markers: 0 of 0 records (100%)');
});
