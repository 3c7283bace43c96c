import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, ConfigStore, parseConfig, type SluiceConfig } from '../src/index.ts';

const keyring = [
  { id: 'k2', key: { env: 'SLUICE_KEYRING_K2' } },
  { id: 'k1', key: { file: '/etc/sluice/keyring/k1' } },
];
const refused = (runtimeDestinations: unknown, field: RegExp) =>
  assert.throws(
    () => parseConfig({ runtimeDestinations }),
    (err) => err instanceof ConfigError && field.test(err.message),
  );

describe('the runtimeDestinations section', () => {
  it('absent: off, and nothing else changes', () => {
    assert.equal(parseConfig({}).runtimeDestinations, undefined);
    assert.equal('runtimeDestinations' in parseConfig({}), false);
  });

  it('holds where each key is read, not the key: no variable or file is read when the config loads', () => {
    assert.deepEqual(parseConfig({ runtimeDestinations: { keyring } }, {}).runtimeDestinations, { keyring });
  });

  it('refuses a bad section naming the field', () => {
    const reference = 'must be { env: NAME } or { file: PATH } (a key is never written in the config itself)';
    refused({}, /^runtimeDestinations\.keyring: is required$/);
    refused({ keyring: [] }, /^runtimeDestinations\.keyring: must NOT have fewer than 1 items$/);
    refused({ keyring, extra: 1 }, /^runtimeDestinations\.extra: is not a known setting$/);
    refused({ keyring: [{ id: 'k.1', key: { env: 'K' } }] }, /^runtimeDestinations\.keyring\[0\]\.id: must match/);
    for (const key of ['literal-key-bytes', { env: '' }, { env: 'K', file: '/k' }, { value: 'x' }])
      assert.throws(
        () => parseConfig({ runtimeDestinations: { keyring: [{ id: 'k1', key }] } }),
        (err) => err instanceof ConfigError && err.message === `runtimeDestinations.keyring[0].key: ${reference}`,
      );
    refused(
      { keyring: [keyring[0], { ...keyring[1], id: 'k2' }] },
      /^runtimeDestinations\.keyring\[1\]\.id: duplicate id "k2"/,
    );
  });
});

describe('a layer over the file config (ConfigStore#lay)', () => {
  const file = (id: string) => parseConfig({ sources: [{ id, writeKeys: ['k'] }] });
  const renamed = (config: SluiceConfig, name: string): SluiceConfig => ({
    ...config,
    sources: config.sources.map((s) => ({ ...s, name })),
  });

  it('is laid over the config the file gives and over every one it gives later; `file` keeps the file’s', () => {
    const store = new ConfigStore(undefined, file('a'));
    let name = 'first';
    const changes: SluiceConfig[] = [];
    store.on('change', (c) => changes.push(c));
    store.lay((config) => renamed(config, name));
    assert.equal(store.current.sources[0]!.name, 'first');
    assert.equal(store.file.sources[0]!.name, '');

    store.set(file('b'));
    assert.deepEqual([store.current.sources[0]!.id, store.current.sources[0]!.name], ['b', 'first']);
    assert.equal(store.file.sources[0]!.id, 'b');

    name = 'second';
    store.refresh();
    assert.deepEqual([store.current.sources[0]!.id, store.current.sources[0]!.name], ['b', 'second']);
    assert.equal(changes.length, 3);
  });

  it('goes through the reload steps: a config a step cannot build is reported invalid, and the one in force stays', () => {
    const store = new ConfigStore(undefined, file('a'));
    let name = 'ok';
    store.lay((config) => renamed(config, name));
    const built: string[] = [];
    store.onReload((next) => {
      if (next.sources[0]!.name === 'bad') throw new Error('cannot build');
      return () => built.push(next.sources[0]!.name);
    });
    const invalid: Error[] = [];
    store.on('invalid', (err) => invalid.push(err));
    const running = store.current;

    name = 'bad';
    store.refresh();
    assert.equal(store.current, running);
    assert.deepEqual(
      invalid.map((e) => e.message),
      ['cannot build'],
    );
    // A file reload meanwhile is merged the same way, and refused the same way.
    assert.throws(() => store.set(file('b')), /cannot build/);
    assert.equal(store.current, running);
    assert.equal(store.file.sources[0]!.id, 'a', 'the file config refused stays out too');

    name = 'good';
    store.refresh();
    assert.deepEqual(built, ['good']);
    assert.equal(store.current.sources[0]!.name, 'good');
  });

  it('a layer that cannot build the config is refused when laid, and the store keeps none', () => {
    const store = new ConfigStore(undefined, file('a'));
    const running = store.current;
    assert.throws(
      () =>
        store.lay(() => {
          throw new Error('no');
        }),
      /no/,
    );
    assert.equal(store.current, running);
    store.set(file('b'));
    assert.equal(store.current.sources[0]!.id, 'b');
  });
});
