// The one active audience-sync instance rides out a broker outage: its consumer crashes, runs again,
// finds the group's commits still its own, and goes on consuming without a restart.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startLocalKafka } from '@sluice/local-kafka';
import { testServiceContext, waitUntil, metric } from '@sluice/testkit';
import { ROUTES } from '../src/constants.ts';
import { createAudienceSync } from '../src/index.ts';
import { audienceSyncConfig, postChunk, vipSnapshot } from './helpers.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const audience = vipSnapshot;

test('after a broker outage the owner consumes again without restarting', { timeout: 240_000 }, async () => {
  const broker = await startLocalKafka({ log: () => undefined });
  cleanups.push(() => broker.dispose());
  const config = audienceSyncConfig();
  const ctx = testServiceContext('audience-sync', config);
  ctx.brokers = [broker.brokers];
  // Shrunk group timings: the member lost in the outage leaves after 6 s, re-runs come every ≤ 2 s.
  const membership = { sessionTimeoutMs: 6_000, rerunBackoff: { initialMs: 500, maxMs: 2_000 } };
  const service = await createAudienceSync(ctx, { port: 0, membership }).start();
  cleanups.push(() => service.close());
  let fatal: Error | undefined;
  void service.fatal.then((err) => (fatal = err));

  assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s1', ['u1']))).status, 202);
  await waitUntil(
    async () => (await metric(service.port, 'sluice_audience_syncs_completed_total')) === 1,
    20_000,
    's1',
  );

  await broker.stop();
  await waitUntil(
    async () => (await metric(service.port, 'sluice_audience_active')) === 0,
    90_000,
    'the consumer out of the group',
  );
  await broker.restart();
  await waitUntil(async () => (await metric(service.port, 'sluice_audience_active')) === 1, 90_000, 'the owner again');
  assert.equal(fatal, undefined, 'no restart');

  await waitUntil(
    async () => (await postChunk(service.port, ROUTES.audiences, audience('s2', ['u2']))).status === 202,
    30_000,
    's2 accepted',
  );
  await waitUntil(
    async () => (await metric(service.port, 'sluice_audience_syncs_completed_total')) === 2,
    30_000,
    's2',
  );
  assert.equal(fatal, undefined);
});
