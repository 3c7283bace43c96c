// `sluice audit` reads the ledger answers only once they have the shape the delivery log's API
// describes (`@sluice/log-api`): a server answering in another shape is a message naming the field.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import type { Ledger, Unaccounted } from '@sluice/log-api';
import { memoryIo } from './cli-io.ts';

const TOKEN = 'cli-audit-token';
const totals = {
  sourceId: 'web',
  destinationId: 'hooks',
  accepted: 3,
  delivered: 1,
  filtered: 0,
  dead: 0,
  inFlight: 2,
  parked: 0,
  unaccounted: 1,
  oldestUnsettledAt: '2026-01-31T12:00:00.000Z',
  oldestUnsettledAgeSeconds: 90,
};
const ledger: Ledger = {
  from: '2026-01-31T11:00:00.000Z',
  to: '2026-01-31T13:00:00.000Z',
  bucketSeconds: 86_400,
  unaccountedBefore: '2026-01-31T08:00:00.000Z',
  parkedDestinations: [],
  totals: [totals],
  buckets: [],
};
const unaccounted: Unaccounted = { unaccountedBefore: '2026-01-31T08:00:00.000Z', total: 0, unaccounted: [] };
/** What the server answers on each route: set by each test. */
const answers = new Map<string, unknown>();
let server: Server;
let env: NodeJS.ProcessEnv;

before(async () => {
  server = createServer((req, res) => {
    const answer = answers.get(new URL(req.url!, 'http://x').pathname);
    const ok = req.headers.authorization === `Bearer ${TOKEN}` && answer !== undefined;
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? answer : { code: 'not_found', message: 'no such route' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { SLUICE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, SLUICE_API_TOKEN: TOKEN };
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const audit = async () => {
  const io = memoryIo('', env);
  const code = await runCli(['audit'], io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
};

test('audit prints the totals of a ledger answer of the documented shape', async () => {
  answers.set('/api/v1/ledger', ledger);
  answers.set('/api/v1/ledger/unaccounted', unaccounted);
  const run = await audit();
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^web +hooks +3 +1 +0 +0 +2 +0 +1 +90s$/m);
  assert.match(run.stdout, /^unaccounted now .*: 0$/m);
});

test('audit refuses a ledger answer of another shape, naming the field, rather than printing it', async () => {
  answers.set('/api/v1/ledger', { ...ledger, totals: [{ ...totals, accepted: '3' }] });
  answers.set('/api/v1/ledger/unaccounted', unaccounted);
  const run = await audit();
  assert.equal(run.code, 1);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /GET \/api\/v1\/ledger\?\S+: the answer is not what .* \(at totals\[0\]\.accepted\)/);

  answers.set('/api/v1/ledger', ledger);
  answers.set('/api/v1/ledger/unaccounted', { total: 2 });
  const open = await audit();
  assert.equal(open.code, 1);
  assert.match(open.stderr, /GET \/api\/v1\/ledger\/unaccounted\?: the answer .* \(at unaccountedBefore\)/);
});
