import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Destination } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';
import { integrationEnabled, routeEvent } from '../src/routing.ts';

describe('routing (docs/reference/routing.md)', () => {
  const dest = (id: string, extra: Partial<Destination> = {}): Destination => ({
    id,
    name: 'Webhooks',
    tenant: 'default',
    type: 'webhooks',
    enabled: true,
    sourceIds: ['s1'],
    endpoints: [{ url: 'https://example.com/', ref: 'https://example.com/', headers: {} }],
    signing: { xSignature: true, standardWebhooks: false, xSignatureKeys: [], standardWebhooksKeys: [] },
    ...extra,
  });
  const table: [string, Record<string, unknown> | undefined, boolean][] = [
    ['no integrations object', undefined, true],
    ['empty object', {}, true],
    ['All: false', { All: false }, false],
    ['All: false + Webhooks: true', { All: false, Webhooks: true }, true],
    ['All: false + destination id true', { All: false, 'd-1': true }, true],
    ['Webhooks: false', { Webhooks: false }, false],
    ['All: true + Webhooks: false', { All: true, Webhooks: false }, false],
    ['keys are case-sensitive', { webhooks: false }, true],
    ['a settings object counts as on', { All: false, Webhooks: { x: 1 } }, true],
  ];
  for (const [name, integrations, expected] of table) {
    it(name, () => assert.equal(integrationEnabled(integrations, dest('d-1')), expected));
  }
  it('destination ids that are Object.prototype names are looked up as own keys only', () => {
    for (const id of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assert.equal(integrationEnabled({ All: false }, dest(id)), false, `${id}: not named, All: false holds`);
      assert.equal(integrationEnabled(JSON.parse(`{"All":false,"${id}":true}`), dest(id)), true, `${id}: named`);
      assert.equal(integrationEnabled(JSON.parse(`{"${id}":false}`), dest(id)), false, `${id}: turned off`);
    }
  });
  it('routes to enabled destinations of the source only', () => {
    const event = { sourceId: 's1', type: 'track', messageId: 'm', timestamp: 't' } as EventEnvelope;
    const routed = routeEvent(event, [dest('a'), dest('b', { enabled: false }), dest('c', { sourceIds: ['s2'] })]);
    assert.deepEqual(
      routed.map((d) => d.id),
      ['a'],
    );
  });
  it("routes by the source's destinations in config order, each once, and follows a replaced list", () => {
    const event = (sourceId: string) => ({ sourceId, type: 'track', messageId: 'm', timestamp: 't' }) as EventEnvelope;
    const many = Array.from({ length: 1_000 }, (_, i) => dest(`x${i}`, { sourceIds: [`other-${i}`] }));
    const list = [
      dest('a', { sourceIds: ['s1', 's1'] }),
      ...many,
      dest('b', { sourceIds: ['s2', 's1'] }),
      dest('c', { type: 'other' as 'webhooks' }),
    ];
    const ids = (sourceId: string, destinations: readonly Destination[]) =>
      routeEvent(event(sourceId), destinations).map((d) => d.id);
    assert.deepEqual(ids('s1', list), ['a', 'b'], 'a listed twice counts once; another type is not routed');
    assert.deepEqual(ids('s2', list), ['b']);
    assert.deepEqual(ids('other-7', list), ['x7']);
    assert.deepEqual(ids('nobody', list), []);
    const replaced = [dest('b', { sourceIds: ['s2'] }), dest('d')];
    assert.deepEqual(ids('s1', replaced), ['d'], 'a new list (a reload, a catalog change) is indexed anew');
    const off = { ...event('s1'), integrations: { All: false, b: true } } as EventEnvelope;
    assert.deepEqual(
      routeEvent(off, list).map((d) => d.id),
      ['b'],
      'integrations still decide per destination',
    );
  });
});
