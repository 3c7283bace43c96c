import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '@sluice/config';
import { type CatalogEntry, mergeDestinations } from '@sluice/destination-catalog';
import { definition, entry, file } from './fixtures.ts';

const catalogOf = (...entries: CatalogEntry[]) => new Map(entries.map((e) => [e.id, e]));

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

  it('an entry is resolved once per entry and file: a merge after one change resolves that one again', () => {
    const entries = Array.from({ length: 5 }, (_, i) => entry(`d${i}`));
    const first = mergeDestinations(file, catalogOf(...entries));
    const changed = { ...entry('d2', { sourceIds: ['app'] }), version: 2 };
    const second = mergeDestinations(file, catalogOf(...entries.slice(0, 2), changed, ...entries.slice(3)));
    assert.equal(second.destinations[1], first.destinations[1], 'an entry not changed: the same destination');
    assert.notEqual(second.destinations[3], first.destinations[3]);
    assert.deepEqual(second.destinations[3]!.sourceIds, ['app'], 'the changed one resolved again');
    const reloaded = { ...file, config: { ...file.config, sources: [...file.config.sources] } };
    const third = mergeDestinations(reloaded, catalogOf(...entries));
    assert.notEqual(third.destinations[1], first.destinations[1], 'a reload of the file: resolved again');
    assert.deepEqual(third.destinations[1], first.destinations[1]);
    const withoutApp = {
      ...file,
      config: { ...file.config, sources: file.config.sources.filter((x) => x.id !== 'app') },
    };
    assert.deepEqual(
      mergeDestinations(withoutApp, catalogOf(changed)).ignored,
      [{ id: 'd2', reason: 'invalid', field: 'sourceIds[0]', problem: 'unknown source "app"' }],
      'a source the reload removed: the entry that names it is ignored',
    );
  });

  it('a refused entry is reported with the problem full validation names first (its id before its sources)', () => {
    const merged = mergeDestinations(file, catalogOf(entry('a.b'), entry('a_b', { sourceIds: ['nowhere'] })));
    assert.deepEqual(
      merged.ignored.map((i) => [i.id, i.reason === 'invalid' ? i.field : i.reason]),
      [['a_b', 'id']],
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
    assert.equal(merged.destinations.filter((d) => d.sourceIds.includes('web')).length, 1 + 10_000 + 2);
  });
});
