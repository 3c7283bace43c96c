import { after } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { jsonValues, readTopic, testConfig, testKafka, testServiceContext } from '@sluice/testkit';
import { createAudienceSync } from '../src/index.ts';

export const ADMIN_TOKEN = 'test-admin-token-of-32-characters-or-more';

/** A config with one source (`web`) and the admin token the snapshot routes need. */
export const audienceSyncConfig = (): SluiceConfig =>
  testConfig({ sources: [{ id: 'web', writeKeys: ['wk'] }], ingest: { adminToken: ADMIN_TOKEN } });

/** Starts audience-sync services on `config` in-process; each is closed when the test file ends. */
export function serviceStarter(config: SluiceConfig) {
  const started: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const s of started) await s.close().catch(() => undefined);
  });
  return async () => {
    const service = await createAudienceSync(testServiceContext('audience-sync', config), { port: 0 }).start();
    started.push(service);
    return service;
  };
}

/** One snapshot chunk of audience `VIP` of source `web`. */
export const vipSnapshot = (syncId: string, members: string[], final = true) => ({
  sourceId: 'web',
  audience: 'VIP',
  syncId,
  members,
  final,
});

/** POSTs one snapshot chunk to the service's API. */
export async function postChunk(
  port: number,
  route: string,
  body: unknown,
  token = ADMIN_TOKEN,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export interface Identify {
  sourceId: string;
  type: string;
  messageId: string;
  userId: string;
  traits: Record<string, unknown>;
  context: Record<string, { name: string; key: string; syncId: string }>;
  timestamp: string;
  receivedAt: string;
}

/** Reads identifies from the events topic: waits for `count`, then `settleMs` more to catch extras. */
export async function readIdentifies(
  topic: string,
  count: number,
  settleMs = 1_500,
  timeoutMs = 20_000,
): Promise<(Identify & { key: string | null })[]> {
  const records = await readTopic(testKafka({ clientId: 'audience-sync-test' }), topic, { count, settleMs, timeoutMs });
  const values = jsonValues<Identify>(records);
  return values.map((v, i) => ({ ...v, key: records[i]!.key }));
}
