import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore, parseConfig, type SluiceConfig } from '../src/index.ts';

const config = (id: string) => parseConfig({ sources: [{ id, writeKeys: ['k'] }] });

test('a reload is put in force only when every step built its part; a failing step leaves everything as it was', () => {
  const store = new ConfigStore(undefined, config('a'));
  const applied: string[] = [];
  store.onReload((next) => {
    const id = next.sources[0]!.id;
    return () => applied.push(`first:${id}`);
  });
  const stop = store.onReload((next) => {
    if (next.sources[0]!.id === 'bad') throw new Error('cannot build');
    return () => applied.push(`second:${next.sources[0]!.id}`);
  });
  const changes: SluiceConfig[] = [];
  store.on('change', (c) => changes.push(c));

  store.set(config('b'));
  assert.deepEqual(applied, ['first:b', 'second:b']);
  const running = store.current;
  assert.throws(() => store.set(config('bad')), /cannot build/);
  assert.equal(store.current, running);
  assert.deepEqual(applied, ['first:b', 'second:b'], 'no step put anything in force');
  assert.equal(changes.length, 1);

  stop();
  store.set(config('bad'));
  assert.equal(store.current.sources[0]!.id, 'bad');
});

test('reload from the file: an invalid file or a failing step is reported as invalid, the running config stays', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-steps-'));
  try {
    const path = join(dir, 'c.json');
    writeFileSync(path, JSON.stringify({ sources: [{ id: 'a', writeKeys: ['k'] }] }));
    const store = ConfigStore.fromFile(path);
    const running = store.current;
    const invalid: Error[] = [];
    store.on('invalid', (err) => invalid.push(err));
    store.onReload((next) => {
      if (next.sources[0]!.id === 'refused') throw new Error('step refused');
      return () => {};
    });
    writeFileSync(path, '{ "sources": [');
    store.reload();
    writeFileSync(path, JSON.stringify({ sources: [{ id: 'refused', writeKeys: ['k'] }] }));
    store.reload();
    assert.equal(invalid.length, 2);
    assert.match(invalid[0]!.message, /\(file\): is not valid JSON/);
    assert.equal(invalid[1]!.message, 'step refused');
    assert.equal(store.current, running);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
