// `sluice destinations test`: the request it makes of the delivery log's API, what it prints of the
// answer (escaped: the answer's bytes are the receiver's), its JSON, and its exit code.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import type { DestinationTestAnswer } from '@sluice/log-api';
import { memoryIo } from './cli-io.ts';

const TOKEN = 'cli-destination-test-token';
const delivered: DestinationTestAnswer = {
  destinationId: 'crm',
  endpoint: 1,
  url: 'https://crm.example/hook?***',
  messageId: 'sluice-test-1',
  status: 202,
  ok: true,
  latencyMs: 12.5,
  body: 'accepted\\x0a\x1b[2J',
  truncated: true,
};
/** What the server answers next, and the requests it got. */
let answer: unknown = delivered;
const requests: { method: string; path: string; body: string }[] = [];
let server: Server;
let env: NodeJS.ProcessEnv;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method!, path: req.url!, body });
      const ok = req.headers.authorization === `Bearer ${TOKEN}`;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? answer : { code: 'unauthorized', message: 'a valid bearer token is required' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { SLUICE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, SLUICE_API_TOKEN: TOKEN };
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const cli = async (...args: string[]) => {
  const io = memoryIo('', env);
  const code = await runCli(['destinations', 'test', ...args], io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
};

test('asks the API to send the test event to the endpoint given and prints its status, latency and first bytes', async () => {
  answer = delivered;
  const run = await cli('crm/eu', '--endpoint', '1');
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(requests.at(-1), {
    method: 'POST',
    path: '/api/v1/destination-definitions/crm%2Feu/test',
    body: '{"endpoint":1}',
  });
  assert.equal(
    run.stdout,
    'crm endpoint 1 (https://crm.example/hook?***): 202 in 12.5 ms\n' +
      'messageId sluice-test-1\n' +
      'answer (first bytes; there was more):\n' +
      'accepted\\x0a\\x1b[2J\n',
  );
  const bare = await cli('crm');
  assert.equal(bare.code, 0);
  assert.equal(requests.at(-1)!.body, '{}', 'the first endpoint, by the API');
});

test('--json prints the answer; an answer that is not a 2xx exits 1', async () => {
  answer = { ...delivered, status: null, ok: false, error: 'timed out after 300 ms (delivery.timeout)', body: '' };
  const json = await cli('crm', '--json');
  assert.equal(json.code, 1);
  assert.deepEqual(JSON.parse(json.stdout), answer);
  assert.match(json.stderr, /no answer/);
  const human = await cli('crm');
  assert.equal(human.code, 1);
  assert.match(human.stdout, /: no answer after 12\.5 ms: timed out after 300 ms \(delivery\.timeout\)\n/);
  answer = { ...delivered, status: 500, ok: false };
  const failed = await cli('crm');
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /the endpoint answered 500/);
});

test('refuses an endpoint that is not an index, and an answer of another shape', async () => {
  const before = requests.length;
  const bad = await cli('crm', '--endpoint', 'first');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--endpoint must be/);
  assert.equal(requests.length, before, 'nothing asked');
  answer = { ...delivered, status: 'fine' };
  const odd = await cli('crm');
  assert.equal(odd.code, 1);
  assert.match(odd.stderr, /not what the delivery log's API describes \(at status\)/);
});
