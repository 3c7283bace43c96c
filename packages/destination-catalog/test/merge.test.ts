import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Destination, parseConfig } from '@sluice/config';
import { indexBySource, mergeDestinations } from '@sluice/destination-catalog';
import { catalogOf, definition, entry, file } from './fixtures.ts';

describe('catalog: merged with the config file', () => {
  it("the file's destinations first, then the runtime ones by id, resolved as the file's are", () => {
    const merged = mergeDestinations(file, catalogOf(entry('zeta'), entry('alpha', { sourceIds: ['web', 'app'] })));
    assert.deepEqual(
      merged.destinations.map((d) => d.id),
      ['orders', 'alpha', 'zeta'],
    );
    assert.equal(merged.destinations[0], file.config.destinations[0], "the file's own objects");
    const asFile = parseConfig({ sources: [{ id: 'web', writeKeys: ['k'] }], destinations: [definition('zeta')] }, {})
      .destinations[0];
    assert.deepEqual(merged.destinations[2], asFile);
    assert.deepEqual(merged.ignored, []);
  });

  it('an id the file declares is the file’s: the runtime one is ignored and reported, naming the file', () => {
    const merged = mergeDestinations(file, catalogOf(entry('orders'), entry('billing')));
    assert.deepEqual(
      merged.destinations.map((d) => d.id),
      ['orders', 'billing'],
    );
    assert.equal(merged.destinations[0]!.endpoints[0]!.url, 'https://orders.example/');
    assert.deepEqual(merged.ignored, [{ id: 'orders', reason: 'file_declared', file: '/etc/sluice/config.yaml' }]);
  });

  it('a runtime destination the file in force no longer admits is reported; the others apply', () => {
    const merged = mergeDestinations(
      file,
      catalogOf(entry('gone', { sourceIds: ['removed'] }), entry('orders_'), entry('orders.x'), entry('ok')),
    );
    assert.deepEqual(
      merged.destinations.map((d) => d.id),
      ['orders', 'ok', 'orders.x', 'orders_'],
    );
    assert.deepEqual(merged.ignored, [
      { id: 'gone', reason: 'invalid', field: 'sourceIds[0]', problem: 'unknown source "removed"' },
    ]);
    const clash = mergeDestinations(file, catalogOf(entry('a.b'), entry('a_b')));
    assert.deepEqual(
      clash.ignored.map((i) => [i.id, i.reason]),
      [['a_b', 'invalid']],
    );
  });

  it('indexes destinations by source, in their order; a destination with no source is in no list', () => {
    const merged = mergeDestinations(
      file,
      catalogOf(entry('alpha', { sourceIds: ['web', 'app', 'web'] }), entry('beta', { sourceIds: [] })),
    );
    const ids = (list: readonly Destination[] | undefined) => (list ?? []).map((d) => d.id);
    assert.deepEqual(ids(merged.bySource.get('web')), ['orders', 'alpha']);
    assert.deepEqual(ids(merged.bySource.get('app')), ['alpha']);
    assert.deepEqual(ids(merged.bySource.get('none')), []);
    assert.deepEqual([...indexBySource(merged.destinations).keys()].sort(), ['app', 'web']);
  });

  it('a source list holds its destinations only, however many others there are', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      ...file.config.destinations[0]!,
      id: `d${i}`,
      sourceIds: [`s${i}`],
    }));
    const index = indexBySource([...many, file.config.destinations[0]!]);
    assert.equal(index.size, 10_001);
    assert.deepEqual(
      index.get('web')!.map((d) => d.id),
      ['orders'],
    );
  });

  it('merges 10,000 runtime destinations, each checked against the file and those before it', () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => entry(`d${String(i).padStart(5, '0')}`));
    // Each differs from an earlier one only by '.' and '_': checked against the ones merged before it.
    const clashes = [entry('d00001.x'), entry('d00001_x'), entry('orders.x'), entry('orders_x')];
    const merged = mergeDestinations(file, catalogOf(...entries, ...clashes));
    assert.equal(merged.destinations.length, 1 + 10_000 + 2);
    assert.deepEqual(
      merged.destinations.slice(0, 3).map((d) => d.id),
      ['orders', 'd00000', 'd00001'],
    );
    assert.deepEqual(
      merged.ignored.map((i) => i.id),
      ['d00001_x', 'orders_x'],
    );
    assert.equal(merged.bySource.get('web')!.length, 1 + 10_000 + 2);
  });
});
