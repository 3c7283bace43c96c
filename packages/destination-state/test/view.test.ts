import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DestinationStateView,
  InvalidStateValueError,
  parseStateKey,
  stateKey,
  writeDestinationState,
  type DestinationStateValue,
  type StateChange,
} from '@sluice/destination-state';
import { parseStateValue } from '../src/state.ts';

const at = '2026-11-26T05:00:00.000Z';
const paused: DestinationStateValue = { state: 'paused', reason: 'maintenance', by: 'ops', at };
const disabled: DestinationStateValue = {
  state: 'disabled',
  reason: 'no 2xx for 3 days',
  by: 'sluice',
  at,
  auto: true,
};
const active: DestinationStateValue = { state: 'active', reason: 'back', by: 'ops', at };

describe('destination state keys', () => {
  it('a destination, and an endpoint whose ref holds slashes', () => {
    assert.equal(stateKey('dest-a'), 'dest-a');
    assert.equal(stateKey('dest-a', 'https://hooks.example/x#2'), 'dest-a/https://hooks.example/x#2');
    assert.deepEqual(parseStateKey('dest-a'), { destinationId: 'dest-a' });
    assert.deepEqual(parseStateKey('dest-a/https://hooks.example/x#2'), {
      destinationId: 'dest-a',
      endpointRef: 'https://hooks.example/x#2',
    });
  });
});

describe('destination state values', () => {
  it('accepts a state record and drops unknown fields', () => {
    const parsed = parseStateValue(JSON.stringify({ ...disabled, extra: 1 }));
    assert.deepEqual(parsed, { ok: true, value: disabled });
  });
  const bad: [string, unknown][] = [
    ['not JSON', 'nope'],
    ['unknown state', { ...paused, state: 'sleeping' }],
    ['reason missing', { state: 'paused', by: 'ops', at }],
    ['empty by', { ...paused, by: '' }],
    ['bad time', { ...paused, at: 'yesterday' }],
    ['auto false', { ...paused, auto: false }],
    ['reason too long', { ...paused, reason: 'x'.repeat(1_001) }],
  ];
  for (const [name, value] of bad) {
    it(`refuses: ${name}`, () => {
      const parsed = parseStateValue(typeof value === 'string' ? value : JSON.stringify(value));
      assert.equal(parsed.ok, false);
    });
  }
  it('the writer refuses an invalid value before sending anything', async () => {
    const sent: unknown[] = [];
    const sink = { send: async (_t: string, m: unknown) => void sent.push(m) };
    const invalid = { ...paused, state: 'sleeping' } as unknown as DestinationStateValue;
    await assert.rejects(writeDestinationState(sink, 't', 'd', invalid), InvalidStateValueError);
    await writeDestinationState(sink, 't', 'd', paused);
    await writeDestinationState(sink, 't', 'd', null);
    assert.deepEqual(sent, [
      { key: 'd', value: JSON.stringify(paused) },
      { key: 'd', value: null },
    ]);
  });
});

describe('DestinationStateView', () => {
  it('a key never written is active', () => {
    const view = new DestinationStateView();
    assert.deepEqual(view.get('d'), { state: 'active' });
    assert.deepEqual(view.get('d', 'e1'), { state: 'active' });
  });

  it('an endpoint is paused when its destination is, and on its own; the other endpoints are not', () => {
    const view = new DestinationStateView();
    view.apply(stateKey('d', 'e1'), paused);
    assert.equal(view.get('d', 'e1').state, 'paused');
    assert.equal(view.get('d', 'e2').state, 'active');
    assert.equal(view.get('d').state, 'active');
    view.apply('d', { ...paused, reason: 'whole destination' });
    assert.equal(view.get('d', 'e2').reason, 'whole destination');
    assert.deepEqual(view.get('d', 'e1'), { state: 'paused', reason: 'whole destination', by: 'ops', since: at });
  });

  it('the more severe state wins: a disabled endpoint under a paused destination is disabled', () => {
    const view = new DestinationStateView();
    view.apply('d', paused);
    view.apply(stateKey('d', 'e1'), disabled);
    assert.deepEqual(view.get('d', 'e1'), {
      state: 'disabled',
      reason: disabled.reason,
      by: 'sluice',
      since: at,
      auto: true,
    });
  });

  it('active after a resume says since when and by whom; a tombstone forgets the key', () => {
    const view = new DestinationStateView();
    view.apply('d', paused);
    view.apply('d', active);
    assert.deepEqual(view.get('d'), { state: 'active', reason: 'back', by: 'ops', since: at });
    view.apply('d', paused);
    view.apply('d', null);
    assert.deepEqual(view.get('d'), { state: 'active' });
  });

  it('tells listeners of every change, naming the destination and the endpoint', () => {
    const view = new DestinationStateView();
    const changes: StateChange[] = [];
    const stop = view.onChange((c) => changes.push(c));
    view.apply('d/https://x.example/h', paused);
    view.apply('d', null); // nothing to delete: no change
    view.apply('d', paused);
    stop();
    view.apply('d', active);
    assert.deepEqual(
      changes.map((c) => [c.destinationId, c.endpointRef, c.value?.state]),
      [
        ['d', 'https://x.example/h', 'paused'],
        ['d', undefined, 'paused'],
      ],
    );
  });
});
