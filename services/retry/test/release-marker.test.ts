import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RETRY_HEADERS, readOrderingRelease } from '@sluice/envelope';
import type { Message, RecordSink } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { Registry } from 'prom-client';
import { Router } from '../src/adapters/router.ts';
import { RetryMetrics } from '../src/metrics.ts';
import { retryMessage, retryState } from './helpers.ts';

/** A consumed retry record's parts (key as bytes). */
const parts = (state: ReturnType<typeof retryState>) => {
  const m = retryMessage(state);
  return { ...m, key: Buffer.from(m.key) };
};

/** A router writing to a recording sink; `crm` delivers per user in order, `plain` does not, `gone` no longer exists. */
function router() {
  const sent: { topic: string; message: Message }[] = [];
  const sink: RecordSink = { send: async (topic, message) => void sent.push({ topic, message }) };
  const r = new Router({
    sink,
    metrics: new RetryMetrics(new Registry()),
    logger: createLogger({ name: 'release-marker-test', level: 'silent' }),
    tiersMs: [1_000],
    tierTopic: () => 'tier',
    topics: () => ({ redeliver: 'redeliver', deadLetter: 'dead', rejected: 'rejected' }),
    now: () => 1_000,
    destination: (id) => (id === 'gone' ? undefined : { ordered: id === 'crm' }),
  });
  return { r, sent };
}

describe('the release marker (docs/reference/ordering.md)', () => {
  it('follows the dead letter of an ordered destination on the redeliver topic, with the event key and no body', async () => {
    const { r, sent } = router();
    const state = retryState({ destinationId: 'crm', messageId: 'head-1' });
    await r.deadLetter(parts(state), state, 'window_exhausted');
    assert.deepEqual(
      sent.map((s) => s.topic),
      ['dead', 'redeliver'],
    );
    const marker = sent[1]!.message;
    assert.equal(marker.key, retryMessage(state).key);
    assert.equal(marker.value, null);
    assert.deepEqual(readOrderingRelease(marker.headers as Record<string, string>), {
      destinationId: 'crm',
      messageId: 'head-1',
    });
  });

  it('is not written for a destination without per-user order', async () => {
    const { r, sent } = router();
    const state = retryState({ destinationId: 'plain' });
    await r.deadLetter(parts(state), state, 'window_exhausted');
    assert.deepEqual(
      sent.map((s) => s.topic),
      ['dead'],
    );
  });

  it('a destination gone meanwhile: dead-lettered destination_deleted, and the marker written whatever its ordering was', async () => {
    const { r, sent } = router();
    const state = retryState({ destinationId: 'gone', messageId: 'head-2', lastError: 'http_500' });
    await r.deadLetter(parts(state), state, 'window_exhausted');
    assert.deepEqual(
      sent.map((s) => s.topic),
      ['dead', 'redeliver'],
    );
    const dead = sent[0]!.message.headers as Record<string, string>;
    assert.equal(dead[RETRY_HEADERS.deadReason], 'destination_deleted');
    assert.equal(dead[RETRY_HEADERS.lastError], 'destination gone is gone');
    assert.equal(dead[RETRY_HEADERS.history], retryMessage(state).headers[RETRY_HEADERS.history], 'the attempts kept');
    assert.deepEqual(readOrderingRelease(sent[1]!.message.headers as Record<string, string>), {
      destinationId: 'gone',
      messageId: 'head-2',
    });
  });

  it('a retry record is never read as a marker', () => {
    assert.equal(readOrderingRelease(retryMessage(retryState()).headers), undefined);
  });
});
