import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type SourcesPage, sourcesAnswer } from '@sluice/log-api';

const page = (): SourcesPage => ({
  sources: [
    {
      origin: 'runtime',
      id: 'shop',
      name: 'Shop',
      tenant: 'default',
      version: 3,
      updatedAt: '2026-11-01T00:00:00.000Z',
      updatedBy: 'admin',
      writeKeys: [
        { id: 'wk_1', createdAt: '2026-11-01T00:00:00.000Z', revokedAt: '2026-11-02T00:00:00.000Z' },
        { id: 'wk_2', createdAt: '2026-11-02T00:00:00.000Z' },
      ],
    },
    { origin: 'file', id: 'web', name: '', tenant: 'default', file: '/etc/sluice/config.yaml' },
  ],
  nextCursor: null,
});

describe('log-api: the sources list', () => {
  it('takes a page of file and runtime sources, a key with or without revokedAt', () => {
    assert.ok(sourcesAnswer.is(page()));
  });

  it('names the field where an answer departs', () => {
    const bad = page() as unknown as { sources: { writeKeys?: { revokedAt?: unknown }[]; file?: unknown }[] };
    bad.sources[0]!.writeKeys![0]!.revokedAt = 3;
    assert.equal(sourcesAnswer.mismatch(bad), 'sources[0].writeKeys[0].revokedAt');
    const noFile = page() as unknown as { sources: Record<string, unknown>[] };
    delete noFile.sources[1]!.file;
    assert.equal(sourcesAnswer.mismatch(noFile), 'sources[1].file');
    assert.equal(sourcesAnswer.mismatch({ sources: [] }), 'nextCursor');
  });
});
