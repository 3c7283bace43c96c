// One active audience-sync instance (docs/audiences.md): on the real broker, a second instance
// stays a ready standby, and a standby that inherits the partitions restarts to read the state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitUntil, metric } from '@sluice/testkit';
import { ROUTES } from '../src/constants.ts';
import { StaleStateError } from '../src/adapters/ownership-guard.ts';
import { audienceSyncConfig, postChunk, readIdentifies, serviceStarter, vipSnapshot } from './helpers.ts';

const config = audienceSyncConfig();
const topics = config.kafka.topics;
const start = serviceStarter(config);

const audience = vipSnapshot;
const vip = (ids: { userId: string; traits: Record<string, unknown> }[]) =>
  ids.map((i) => `${i.userId}:${i.traits.vip}`).sort();

test('two instances: one consumes, the other is a ready standby; the standby that inherits the partitions restarts', async () => {
  const a = await start();
  await waitUntil(async () => (await metric(a.port, 'sluice_audience_active')) === 1, 20_000, 'A active');
  const b = await start();
  assert.equal((await fetch(`http://127.0.0.1:${b.port}/readyz`)).status, 200, 'the standby is ready');
  assert.equal(await metric(b.port, 'sluice_audience_active'), 0);

  // A chunk posted to the standby's API lands on the topic and is handled by the owner alone.
  assert.equal((await postChunk(b.port, ROUTES.audiences, audience('s1', ['u1', 'u2']))).status, 202);
  const first = await readIdentifies(topics.events, 2, 2_000);
  assert.deepEqual(vip(first), ['u1:true', 'u2:true']);
  assert.equal(await metric(a.port, 'sluice_audience_syncs_completed_total'), 1);
  assert.equal(await metric(b.port, 'sluice_audience_syncs_completed_total'), 0);
  assert.equal(await metric(a.port, 'sluice_audience_active'), 1, 'A keeps the partitions when B joins');

  // A stops: B owns the partitions now, but read the state before A wrote s1's: it must restart.
  await a.close();
  const verdict = await Promise.race([b.fatal, new Promise<undefined>((r) => setTimeout(r, 45_000, undefined))]);
  assert.ok(verdict instanceof StaleStateError, `B reports a stale state (${verdict})`);
  assert.equal(
    await metric(b.port, 'sluice_audience_syncs_completed_total'),
    0,
    'B handled nothing with its stale state',
  );
  await b.close();

  // B's restart reads the state A wrote: the next sync emits only the changes.
  const restarted = await start();
  assert.equal((await postChunk(restarted.port, ROUTES.audiences, audience('s2', ['u2', 'u3']))).status, 202);
  const all = await readIdentifies(topics.events, 4, 2_000);
  assert.deepEqual(vip(all.filter((i) => i.context.audience!.syncId === 's2')), ['u1:false', 'u3:true']);
  assert.equal(await metric(restarted.port, 'sluice_audience_active'), 1);
});
