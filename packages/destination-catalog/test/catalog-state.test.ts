import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRecord, type CatalogState, emptyCatalogState } from '../src/catalog-state.ts';
import type { ParsedRecord } from '../src/record.ts';

let serial = 0;
/** A change record of `id` at `version`, its key new as a writer's would be. */
function change(id: string, version: number, kind: 'entry' | 'deleted' = 'entry'): ParsedRecord {
  const key = `${id}@${(serial++).toString(16).padStart(16, '0')}`;
  const mark = { id, version, updatedAt: '2026-11-01T00:00:00.000Z', updatedBy: 'test' };
  return kind === 'deleted' ? { kind, key, mark } : { kind, key, entry: { ...mark, definition: { id, written: key } } };
}
const cleared = (record: ParsedRecord): ParsedRecord => ({ kind: 'cleared', key: record.key, id: idOf(record) });
const idOf = (record: ParsedRecord) =>
  record.kind === 'deleted' ? record.mark.id : record.kind === 'cleared' ? record.id : record.entry.id;

function fold(records: readonly ParsedRecord[], state = emptyCatalogState()): CatalogState {
  for (const record of records) applyRecord(state, record);
  return state;
}
/** What readers must agree on: each id's record in force and version, and the destinations. */
const agreed = (state: CatalogState) => ({
  heads: [...state.heads].sort(([a], [b]) => a.localeCompare(b)),
  entries: [...state.destinations.keys()].sort().map((id) => [id, state.destinations.get(id)!.definition.written]),
});

describe('catalog: the apply rule', () => {
  it('applies each version on the one before it; a deletion is a version too', () => {
    const state = emptyCatalogState();
    const [v1, v2, v3] = [change('a', 1), change('a', 2), change('a', 3, 'deleted')];
    assert.equal(applyRecord(state, v1), 'applied');
    assert.equal(applyRecord(state, v2), 'applied');
    assert.equal(state.destinations.get('a')!.definition.written, v2.key);
    assert.deepEqual([...state.stale.get('a')!], [v1.key]);
    assert.equal(applyRecord(state, v3), 'applied');
    assert.equal(state.destinations.has('a'), false);
    assert.deepEqual(state.heads.get('a'), { version: 3, key: v3.key });
  });

  it('of two writers that read the same version, the first in the log wins; the other is ignored and stale', () => {
    const state = fold([change('a', 1)]);
    const [mine, theirs] = [change('a', 2), change('a', 2)];
    assert.equal(applyRecord(state, mine), 'applied');
    assert.equal(applyRecord(state, theirs), 'ignored');
    assert.equal(state.destinations.get('a')!.definition.written, mine.key);
    assert.ok(state.stale.get('a')!.has(theirs.key));
    // Two creates of a new id: the same.
    const [first, second] = [change('b', 1), change('b', 1)];
    assert.deepEqual([applyRecord(state, first), applyRecord(state, second)], ['applied', 'ignored']);
    // A delete and a replace on the same version: whichever comes first.
    const [del, late] = [change('a', 3, 'deleted'), change('a', 3)];
    assert.deepEqual([applyRecord(state, del), applyRecord(state, late)], ['applied', 'ignored']);
    assert.equal(state.destinations.has('a'), false);
  });

  it('a change based on a deleted destination is ignored; one created again goes on from the deletion', () => {
    const state = fold([change('a', 1), change('a', 2, 'deleted')]);
    assert.equal(applyRecord(state, change('a', 2)), 'ignored', 'a replace read before the delete');
    assert.equal(applyRecord(state, change('a', 1)), 'ignored', 'a create that did not see the deletion');
    assert.equal(applyRecord(state, change('a', 3)), 'applied', 'a create after the deletion');
    assert.equal(state.heads.get('a')!.version, 3);
  });

  it('a null clears a stale key; the key in force takes the id out altogether', () => {
    const [v1, v2] = [change('a', 1), change('a', 2)];
    const state = fold([v1, v2]);
    assert.equal(applyRecord(state, cleared(v1)), 'cleared');
    assert.equal(state.stale.has('a'), false);
    assert.equal(state.destinations.get('a')!.version, 2);
    applyRecord(state, cleared(v2));
    assert.equal(state.heads.has('a'), false);
    assert.equal(state.destinations.has('a'), false);
  });

  it('a source and a destination of one id are apart: each its own record in force, versions and clearing', () => {
    const key = (name: string) => `${name}@${(serial++).toString(16).padStart(16, '0')}`;
    const mark = { id: 'a', updatedAt: '2026-11-01T00:00:00.000Z', updatedBy: 'test' };
    const source = (version: number): ParsedRecord => ({
      kind: 'source',
      key: key('source:a'),
      entry: { ...mark, version, definition: { id: 'a', name: `v${version}`, tenant: 'default', writeKeys: [] } },
    });
    const state = fold([change('a', 1), change('a', 2)]);
    const [s1, s2] = [source(1), source(2)];
    assert.deepEqual([applyRecord(state, s1), applyRecord(state, s2)], ['applied', 'applied']);
    assert.equal(state.destinations.get('a')!.version, 2);
    assert.equal(state.sources.get('a')!.definition.name, 'v2');
    assert.deepEqual(state.heads.get('source:a'), { version: 2, key: s2.key });
    assert.deepEqual([...state.stale.get('source:a')!], [s1.key]);
    assert.equal(applyRecord(state, source(2)), 'ignored', 'a second change on source version 1');
    const deletion: ParsedRecord = { kind: 'deleted', key: key('source:a'), mark: { ...mark, version: 3 } };
    assert.equal(applyRecord(state, deletion), 'applied');
    assert.equal(state.sources.has('a'), false);
    assert.equal(state.destinations.get('a')!.version, 2, 'the destination stays');
    applyRecord(state, { kind: 'cleared', key: deletion.key, id: 'a' });
    assert.equal(state.heads.has('source:a'), false);
    assert.equal(state.heads.get('a')!.version, 2);
  });

  it('reading the log again from the start gives the same state', () => {
    const log = [change('a', 1), change('a', 1), change('b', 1), change('a', 2), change('b', 2, 'deleted')];
    assert.deepEqual(agreed(fold(log)), agreed(fold(log)));
    assert.deepEqual(fold(log).stale, fold(log).stale);
  });

  it('concurrent writers, then any compaction and any reader: every reader ends in the same state', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const log = simulate(seed);
      const full = agreed(fold(log.flat()));
      const random = prng(seed * 7919);
      for (let trial = 0; trial < 5; trial++) {
        const cut = Math.floor(random() * (log.length + 1));
        const compacted = compact(log, { cut, dropNulls: random() < 0.5 });
        assert.deepEqual(agreed(fold(compacted)), full, `seed ${seed}, cut ${cut}: a reader started after compaction`);
        // A reader that had read part of the log before compaction, then reads the rest compacted.
        const read = Math.floor(random() * (log.flat().length + 1));
        const before = fold(log.flat().slice(0, read));
        const rest = compacted.filter((r) => log.flat().indexOf(r) >= read);
        assert.deepEqual(agreed(fold(rest, before)), full, `seed ${seed}, read ${read}: a reader caught mid-way`);
      }
    }
  });
});

/** A small deterministic random source (mulberry32), so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Three writers, each reading the log up to its own position (behind the end, as a live reader
 * is), changing what it read — creates, replaces and deletes of two ids — and clearing, in one
 * batch, the stale keys of an id it read. The log as its batches.
 */
function simulate(seed: number): ParsedRecord[][] {
  const random = prng(seed);
  const log: ParsedRecord[][] = [];
  const writers = Array.from({ length: 3 }, () => ({ position: 0, state: emptyCatalogState() }));
  for (let step = 0; step < 60; step++) {
    const writer = writers[Math.floor(random() * writers.length)]!;
    const end = log.flat().length;
    const target = writer.position + Math.floor(random() * (end - writer.position + 1));
    fold(log.flat().slice(writer.position, target), writer.state);
    writer.position = target;
    const id = random() < 0.5 ? 'a' : 'b';
    const head = writer.state.heads.get(id);
    const action = random();
    if (action < 0.25) {
      const stale = [...(writer.state.stale.get(id) ?? [])];
      if (stale.length > 0) log.push(stale.map((key) => ({ kind: 'cleared', key, id })));
    } else if (head === undefined || !writer.state.destinations.has(id)) {
      log.push([change(id, (head?.version ?? 0) + 1)]);
    } else {
      log.push([change(id, head.version + 1, action < 0.4 ? 'deleted' : 'entry')]);
    }
  }
  return log;
}

/**
 * The log as Kafka's compaction leaves it, cleaned up to batch `cut` (a batch is cleaned whole):
 * a record there is removed when a later record in the cleaned part has its key; nulls there may
 * be removed too, once their retention passes.
 */
function compact(log: ParsedRecord[][], options: { cut: number; dropNulls: boolean }): ParsedRecord[] {
  const cleaned = log.slice(0, options.cut).flat();
  const last = new Map<string, number>();
  cleaned.forEach((record, offset) => last.set(record.key, offset));
  const kept = cleaned.filter(
    (record, offset) => last.get(record.key) === offset && !(options.dropNulls && record.kind === 'cleared'),
  );
  return [...kept, ...log.slice(options.cut).flat()];
}
