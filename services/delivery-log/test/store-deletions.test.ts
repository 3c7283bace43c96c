import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventEntry, rejectedEntry, storeFixture } from './helpers.ts';

const userEvent = (messageId: string, userId: string, receivedAt: number, sourceId = 'src') => {
  const envelope = {
    sourceId,
    messageId,
    type: 'track',
    event: 'E',
    userId,
    receivedAt: new Date(receivedAt).toISOString(),
  };
  return eventEntry({ sourceId, messageId, userId, receivedAt, envelope, event: JSON.stringify(envelope) });
};
const deletion = (messageId: string, userId: string, receivedAt: number) => {
  const envelope = {
    sourceId: 'src',
    messageId,
    type: 'delete',
    userId,
    receivedAt: new Date(receivedAt).toISOString(),
  };
  return eventEntry({ messageId, userId, receivedAt, eventType: 'delete', envelope, event: JSON.stringify(envelope) });
};

describe('delivery-log store: deletion requests', () => {
  const db = storeFixture();

  it("removes the user's events and rejected bodies of that source received up to the request, and keeps later ones out", async () => {
    await db.store.ingest([
      userEvent('u1-a', 'u1', 1_000),
      userEvent('u1-b', 'u1', 2_000),
      userEvent('u2-a', 'u2', 1_500),
      userEvent('u1-other-source', 'u1', 1_500, 'other'),
      rejectedEntry({ messageId: 'u1-bad', userId: 'u1', at: 1_200, value: '{"userId":"u1","type":"track"}' }),
      rejectedEntry({ messageId: 'u2-bad', userId: 'u2', at: 1_200 }),
    ]);
    const report = await db.store.ingest([deletion('del-1', 'u1', 5_000)]);
    assert.deepEqual(report.deleted, { messages: 2, rejections: 1 });
    assert.equal(await db.store.message('src', 'u1-a'), undefined);
    assert.equal(await db.store.message('src', 'u1-b'), undefined);
    assert.ok(await db.store.message('src', 'u2-a'), 'another user stays');
    assert.ok(await db.store.message('other', 'u1-other-source'), 'another source stays');
    assert.ok(await db.store.message('src', 'del-1'), 'the deletion itself is what was delivered: it stays');
    const bodies = await db.sql.query<{ message_id: string }>('select message_id from rejections order by message_id');
    assert.deepEqual(
      bodies.map((b) => b.message_id),
      ['u2-bad'],
    );
    const [attempts] = await db.sql.query<{ n: number }>(
      "select count(*)::int as n from deliveries where message_id in ('u1-a', 'u1-b')",
    );
    assert.equal(Number(attempts!.n), 0);

    // Read after the deletion: an event received before it is not kept; one received after it is.
    const late = await db.store.ingest([
      userEvent('u1-late', 'u1', 4_000),
      userEvent('u1-new', 'u1', 6_000),
      rejectedEntry({ messageId: 'u1-late-bad', userId: 'u1', at: 4_500 }),
    ]);
    assert.deepEqual(late.deleted, { messages: 0, rejections: 0 });
    assert.equal(await db.store.message('src', 'u1-late'), undefined);
    assert.ok(await db.store.message('src', 'u1-new'));
    const [lateBody] = await db.sql.query<{ n: number }>(
      "select count(*)::int as n from rejections where message_id = 'u1-late-bad'",
    );
    assert.equal(Number(lateBody!.n), 0);
  });

  it('a deletion in the same batch as the events removes them too', async () => {
    const report = await db.store.ingest([userEvent('u3-a', 'u3', 1_000), deletion('del-3', 'u3', 2_000)]);
    assert.equal(report.deleted.messages, 1);
    assert.equal(await db.store.message('src', 'u3-a'), undefined);
  });
});
