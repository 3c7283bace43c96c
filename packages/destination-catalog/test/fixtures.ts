import { randomBytes } from 'node:crypto';
import { parseConfig } from '@sluice/config';
import type { CatalogContext, CatalogEntry, FileConfig } from '@sluice/destination-catalog';
import { Keyring } from '@sluice/secret-keyring';

/** A config file with two sources and one destination, `orders`. */
export const file: FileConfig = {
  path: '/etc/sluice/config.yaml',
  config: parseConfig(
    {
      sources: [
        { id: 'web', writeKeys: ['k1'] },
        { id: 'app', writeKeys: ['k2'] },
      ],
      destinations: [
        { id: 'orders', type: 'webhooks', sourceIds: ['web'], settings: { webhookUrl: 'https://orders.example/' } },
      ],
    },
    {},
  ),
};

/** The bytes of the fixtures' key `k1`. */
export const KEY_1 = randomBytes(32);
export const keyring = new Keyring([{ id: 'k1', key: KEY_1 }]);
export const context: CatalogContext = { file, keyring };
export const T0 = Date.UTC(2026, 10, 1);

/** A valid runtime definition, with its id and any settings given. */
export function definition(id: string, settings: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type: 'webhooks',
    sourceIds: ['web'],
    settings: { webhooks: [{ url: `https://${id}.example/in` }], ...settings },
  };
}

/** A runtime destination in force at version 1, its definition `definition(id)` with `extra` over it. */
export const entry = (id: string, extra: Record<string, unknown> = {}): CatalogEntry => ({
  id,
  version: 1,
  updatedAt: '2026-11-01T00:00:00.000Z',
  updatedBy: 'alice',
  definition: { ...definition(id), ...extra },
});

/** A catalog holding these runtime destinations (and the runtime sources given, if any). */
export const catalogOf = (...entries: CatalogEntry[]) => ({
  destinations: new Map(entries.map((e) => [e.id, e])),
  sources: new Map(),
  tokens: new Map(),
});
