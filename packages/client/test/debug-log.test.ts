import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Analytics } from '../src/index.ts';
import { fakeIngestPerTest } from './support/fake-ingest.ts';

const ingest = fakeIngestPerTest();

describe('debug logging', () => {
  it('logs queueing, sending and retries when enabled, never the write key', async () => {
    ingest.responder = (n) => ({ status: n === 1 ? 500 : 200 });
    const lines: string[] = [];
    const analytics = new Analytics('secret-write-key', {
      endpoint: ingest.endpoint,
      debug: true,
      log: (line) => lines.push(line),
      retryMinDelay: 1,
    });
    const id = analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    const text = lines.join('\n');
    assert.match(text, new RegExp(`^analytics \\S+Z queued track ${id}`, 'm'));
    assert.match(text, /HTTP 500\); retrying in \d+ ms/);
    assert.match(text, /sent batch of 1 messages/);
    assert.doesNotMatch(text, /secret-write-key/);
    assert.doesNotMatch(text, /c2VjcmV0/); // nor its base64
  });

  it('is silent when disabled', async () => {
    const lines: string[] = [];
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, debug: false, log: (line) => lines.push(line) });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.deepEqual(lines, []);
  });

  it('reports an unhandled delivery failure on the log sink even when debugging is off', async () => {
    ingest.responder = () => ({ status: 400 });
    const lines: string[] = [];
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, log: (line) => lines.push(line) });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /1 messages not delivered: server rejected the batch with HTTP 400/);
  });

  it('DEBUG=analytics in the environment writes log lines to stderr', async () => {
    const script = `
      import { Analytics } from '@sluice/analytics';
      const a = new Analytics('k', { endpoint: '${ingest.endpoint}' });
      a.identify({ userId: 'u' });
      await a.close();`;
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const run = (DEBUG: string) =>
      promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        cwd: root,
        env: { ...process.env, DEBUG },
        timeout: 20_000,
      });
    const on = await run('analytics');
    assert.match(on.stderr, /^analytics \S+Z queued identify /m);
    assert.match(on.stderr, /^analytics \S+Z sent batch of 1 messages/m);
    const off = await run('');
    assert.equal(off.stderr, '');
    assert.equal(ingest.messages.length, 2);
  });
});
