import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RecordSink } from '@sluice/kafka';
import {
  actionRecord,
  appendDestinationAction,
  MAX_REASON_CHARS,
  newActionId,
  parseActionRecord,
  STATE_AFTER,
  stateOf,
} from '../src/index.ts';

const at = '2026-11-26T06:00:00.000Z';

describe('destination actions', () => {
  it('names the token that did it by id beside its name, and reads a record written before it did', () => {
    const record = actionRecord('pause', 'd', undefined, { reason: 'r', by: 'ana', byTokenId: 'tok_1', at, id: 'x' });
    assert.equal(record.byTokenId, 'tok_1');
    assert.deepEqual(parseActionRecord(JSON.parse(JSON.stringify(record))), record);
    assert.deepEqual(
      stateOf(record),
      { state: 'paused', reason: 'r', by: 'ana', at },
      'the state value stays as it was',
    );
    const { byTokenId: _, ...older } = record;
    assert.deepEqual(parseActionRecord(older), older);
    assert.equal(parseActionRecord({ ...record, byTokenId: 7 }), undefined);
  });

  it('each action leads to its state, and its record carries the state value written', () => {
    assert.deepEqual(STATE_AFTER, { pause: 'paused', resume: 'active', disable: 'disabled', enable: 'active' });
    const record = actionRecord('disable', 'd', 'e1', { reason: 'no 2xx for 72h', by: 'sluice', at, auto: true });
    assert.deepEqual(record, {
      action: 'disable',
      destinationId: 'd',
      endpointRef: 'e1',
      state: 'disabled',
      reason: 'no 2xx for 72h',
      by: 'sluice',
      at,
      auto: true,
    });
    assert.deepEqual(stateOf(record), { state: 'disabled', reason: 'no 2xx for 72h', by: 'sluice', at, auto: true });
  });

  it('an action id is read back with its record; two actions of one millisecond differ by it', () => {
    const a = actionRecord('pause', 'd', undefined, { reason: 'r', by: 'ana', at, id: newActionId() });
    const b = actionRecord('resume', 'd', undefined, { reason: 'r', by: 'ana', at, id: newActionId() });
    assert.notEqual(a.id, b.id);
    assert.deepEqual(parseActionRecord(JSON.parse(JSON.stringify(a))), a);
    const old = actionRecord('pause', 'd', undefined, { reason: 'r', by: 'ana', at });
    assert.equal('id' in old, false, 'a record without an id is read as one without');
    assert.equal('id' in stateOf(a), false, 'the state value stays as documented');
  });

  it('cuts a long reason to what readers accept', () => {
    const record = actionRecord('pause', 'd', undefined, { reason: 'x'.repeat(5_000), by: 'ops', at });
    assert.equal(record.reason.length, MAX_REASON_CHARS);
    assert.equal('endpointRef' in record, false);
  });

  it('reads back what it wrote, keyed like the state; anything else is not an action', async () => {
    const sent: { topic: string; key: unknown; value: string }[] = [];
    const sink: RecordSink = {
      send: async (topic, m) => void sent.push({ topic, key: m.key, value: String(m.value) }),
    };
    const record = actionRecord('pause', 'd', 'e/1', { reason: 'maintenance', by: 'ana', at });
    await appendDestinationAction(sink, 'sluice.destination-actions', record);
    assert.equal(sent[0]!.key, 'd/e/1');
    assert.deepEqual(parseActionRecord(JSON.parse(sent[0]!.value)), record);
    for (const bad of [
      null,
      'x',
      { ...record, action: 'explode' },
      { ...record, destinationId: 1 },
      { ...record, at: 'x' },
      { ...record, id: 7 },
      { ...record, id: 'x'.repeat(65) },
    ])
      assert.equal(parseActionRecord(bad), undefined, JSON.stringify(bad));
  });
});
