import assert from 'node:assert/strict';
import { it } from 'node:test';
import { UserChains } from '../src/ordering/user-chains.ts';

it("a user's chain runs its steps one after the other, counts those waiting, and names the one running longest", async () => {
  let now = 1_000;
  const chains = new UserChains(() => now);
  let release!: () => void;
  const blocked = new Promise<void>((resolve) => (release = resolve));
  const order: string[] = [];
  const first = chains.serial({ destinationId: 'd', key: 'u', kind: 'waiting' }, async () => {
    order.push('first');
    await blocked;
  });
  const second = chains.serial({ destinationId: 'd', key: 'u', kind: 'landed' }, async () => void order.push('second'));
  const other = chains.serial({ destinationId: 'd', key: 'v', kind: 'fresh' }, async () => void order.push('other'));
  await other;
  assert.deepEqual(order, ['first', 'other'], "another user's step does not wait");
  assert.equal(chains.queued, 1, 'the second step of u waits behind the first');
  now = 31_000;
  assert.deepEqual(chains.longest(), { destinationId: 'd', kind: 'waiting', since: 1_000 });
  release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first', 'other', 'second']);
  assert.equal(chains.queued, 0);
  assert.equal(chains.longest(), undefined, 'none runs');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(chains.has('d\u0000u'), false, 'a chain is forgotten once its steps ended');
});

it('a step that throws ends its turn: the next runs, and the failure reaches its caller only', async () => {
  const chains = new UserChains(() => 0);
  const failed = chains.serial({ destinationId: 'd', key: 'u', kind: 'retry' }, async () => {
    throw new Error('boom');
  });
  const next = chains.serial({ destinationId: 'd', key: 'u', kind: 'release' }, async () => 'ran');
  await assert.rejects(failed, /boom/);
  assert.equal(await next, 'ran');
  assert.equal(chains.longest(), undefined);
});
