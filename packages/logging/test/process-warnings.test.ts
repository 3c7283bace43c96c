import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// In a child process: the handler replaces Node's own for the whole process.
const script = `
  import { createLogger, logProcessWarnings } from '@sluice/logging';
  logProcessWarnings(createLogger({ name: 'svc' }));
  const fromKafkajs = new Error('-1795457227202 is a negative number.');
  fromKafkajs.name = 'TimeoutNegativeWarning';
  fromKafkajs.stack = 'TimeoutNegativeWarning: x\\n    at RequestQueue.scheduleCheckPendingRequests (/app/node_modules/kafkajs/src/network/requestQueue/index.js:317:37)';
  process.emitWarning(fromKafkajs);
  setTimeout(() => {}, -5);
  process.emitWarning('something to look at', 'CustomWarning');`;

it("Node's warnings become JSON log lines; kafkajs's negative-timeout warning is dropped", async () => {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    timeout: 20_000,
  });
  assert.equal(stderr, '');
  const lines = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(
    lines.map((l) => [l.level, l.service, l.msg, l.warning.name]),
    [
      [40, 'svc', 'Node process warning', 'TimeoutNegativeWarning'],
      [40, 'svc', 'Node process warning', 'CustomWarning'],
    ],
  );
  assert.match(lines[0].warning.message, /-5 is a negative number/);
  assert.equal(lines[1].warning.message, 'something to look at');
});
