import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigStore, parseConfig, type SluiceConfig } from '@sluice/config';
import { type CatalogChange, type CatalogEntry, layCatalog } from '@sluice/destination-catalog';
import type { Logger } from '@sluice/logging';
import { effectiveConfig, IgnoredReports } from '../src/overlay.ts';
import { catalogOf, entry } from './fixtures.ts';

const fileConfig = (sources = ['web', 'app']): SluiceConfig =>
  parseConfig(
    {
      sources: sources.map((id) => ({ id, writeKeys: [`key-${id}`] })),
      destinations: [
        { id: 'orders', type: 'webhooks', sourceIds: ['web'], settings: { webhookUrl: 'https://orders.example/' } },
      ],
    },
    {},
  );
const ids = (config: SluiceConfig) => config.destinations.map((d) => d.id);

/** A reader as `layCatalog` uses it: the catalog in force, and its change listeners. */
function fakeReader(...entries: CatalogEntry[]) {
  const catalog = catalogOf(...entries);
  const listeners = new Set<(change: CatalogChange) => void>();
  return {
    current: () => catalog,
    onChange: (listener: (change: CatalogChange) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners,
    /** A change read from the topic: applied, then told. */
    change(id: string, next: CatalogEntry | undefined) {
      if (next === undefined) catalog.destinations.delete(id);
      else catalog.destinations.set(id, next);
      for (const listener of listeners) listener({ kind: 'destination', id, offset: 0, entry: next });
    },
  };
}

function recordingLogger() {
  const warnings: { fields: unknown; message: string }[] = [];
  const logger = { warn: (fields: unknown, message: string) => warnings.push({ fields, message }) };
  return { logger: logger as unknown as Logger, warnings };
}

describe('the effective config: the file’s with the catalog’s destinations', () => {
  it('only the destinations change: the file’s first, then the runtime ones; every other section is the file’s', () => {
    const file = fileConfig();
    const { config, ignored } = effectiveConfig({ path: '/c.yaml', config: file }, catalogOf(entry('crm')));
    assert.deepEqual(ids(config), ['orders', 'crm']);
    assert.equal(config.kafka, file.kafka);
    assert.equal(config.sources, file.sources);
    assert.equal(config.destinations[0], file.destinations[0]);
    assert.deepEqual(ignored, []);
    assert.deepEqual(ids(file), ['orders'], 'the file’s config is left as it was');
  });
});

describe('the effective config: runtime sources', () => {
  it('the file’s sources, then the runtime ones with their key digests; a runtime destination may name one', () => {
    const file = fileConfig();
    const source = (id: string) => ({
      id,
      version: 1,
      updatedAt: '2026-11-01T00:00:00.000Z',
      updatedBy: 'alice',
      definition: {
        id,
        name: id,
        tenant: 'default',
        writeKeys: [{ id: 'wk_1', hash: 'ab'.repeat(32), createdAt: '2026-11-01T00:00:00.000Z' }],
      },
    });
    const catalog = catalogOf(entry('crm', { sourceIds: ['shop'] }));
    const sources = new Map([
      ['shop', source('shop')],
      ['web', source('web')],
    ]);
    const { config, ignored, ignoredSources } = effectiveConfig(
      { path: '/c.yaml', config: file },
      { ...catalog, sources },
    );
    assert.deepEqual(
      config.sources.map((s) => [s.id, s.writeKeys.length, s.writeKeyDigests?.length ?? 0]),
      [
        ['web', 1, 0],
        ['app', 1, 0],
        ['shop', 0, 1],
      ],
    );
    assert.deepEqual(ids(config), ['orders', 'crm']);
    assert.deepEqual(ignored, []);
    assert.deepEqual(ignoredSources, [{ id: 'web', reason: 'file_declared', file: '/c.yaml' }]);
  });
});

describe('ignored runtime destinations are reported once each', () => {
  const fileDeclared = { id: 'orders', reason: 'file_declared', file: '/c.yaml' } as const;
  const invalid = (problem: string) => ({ id: 'crm', reason: 'invalid', field: 'sourceIds[0]', problem }) as const;

  it('once while ignored for the same reason; again for another reason, or once ignored anew', () => {
    const reports = new IgnoredReports();
    assert.deepEqual(reports.fresh([fileDeclared, invalid('a')]), [fileDeclared, invalid('a')]);
    assert.deepEqual(reports.fresh([fileDeclared, invalid('a')]), []);
    assert.deepEqual(reports.fresh([fileDeclared, invalid('b')]), [invalid('b')]);
    assert.deepEqual(reports.fresh([fileDeclared]), []);
    assert.deepEqual(
      reports.fresh([fileDeclared, invalid('b')]),
      [invalid('b')],
      'applied in between, then ignored again',
    );
  });
});

describe('layCatalog: runtime destinations in a service’s config store', () => {
  it('merged at once, again on each catalog change and each file reload; ignored ones logged once, never a secret', () => {
    const store = new ConfigStore('/etc/sluice/config.yaml', fileConfig());
    const reader = fakeReader(entry('crm', { sourceIds: ['app'] }));
    const { logger, warnings } = recordingLogger();
    const stop = layCatalog({ store, reader, logger });
    assert.deepEqual(ids(store.current), ['orders', 'crm']);
    assert.deepEqual(ids(store.file), ['orders']);

    reader.change('billing', entry('billing'));
    assert.deepEqual(ids(store.current), ['orders', 'billing', 'crm']);
    reader.change('orders', entry('orders'));
    assert.deepEqual(ids(store.current), ['orders', 'billing', 'crm']);
    assert.equal(store.current.destinations[0]!.endpoints[0]!.url, 'https://orders.example/', 'the file’s wins');

    // A reload that removes the source `crm` takes events from: `crm` is ignored, the others stay.
    store.set(fileConfig(['web']));
    assert.deepEqual(ids(store.current), ['orders', 'billing']);
    reader.change('billing', { ...entry('billing'), version: 2 });
    assert.deepEqual(
      warnings.map((w) => [w.message, (w.fields as { id: string; reason: string }).id]),
      [
        ['runtime destination ignored', 'orders'],
        ['runtime destination ignored', 'crm'],
      ],
      'each once, however many merges follow',
    );
    assert.deepEqual(warnings[0]!.fields, { id: 'orders', reason: 'file_declared', file: '/etc/sluice/config.yaml' });
    assert.deepEqual(Object.keys(warnings[1]!.fields as object), ['id', 'reason', 'field', 'problem']);
    assert.doesNotMatch(JSON.stringify(warnings), /example\/in|key-/, 'no URL, no write key');

    reader.change('billing', undefined);
    assert.deepEqual(ids(store.current), ['orders']);
    stop();
    assert.equal(reader.listeners.size, 0);
    reader.change('late', entry('late'));
    assert.deepEqual(ids(store.current), ['orders'], 'no longer followed');
  });

  it('a merge a reload step cannot build keeps the config in force, and is reported as a reload is', () => {
    const store = new ConfigStore(undefined, fileConfig());
    const reader = fakeReader();
    layCatalog({ store, reader, logger: recordingLogger().logger });
    store.onReload((next) => {
      if (next.destinations.some((d) => d.id === 'unbuildable')) throw new Error('cannot build its part');
      return () => {};
    });
    const invalid: Error[] = [];
    store.on('invalid', (err) => invalid.push(err));
    reader.change('crm', entry('crm'));
    const running = store.current;
    reader.change('unbuildable', entry('unbuildable'));
    assert.equal(store.current, running);
    assert.deepEqual(
      invalid.map((e) => e.message),
      ['cannot build its part'],
    );
    reader.change('unbuildable', undefined);
    reader.change('next', entry('next'));
    assert.deepEqual(ids(store.current), ['orders', 'crm', 'next']);
  });
});
