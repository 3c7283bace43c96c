import { jsonValues, readTopic, testKafka } from '@sluice/testkit';

export const ADMIN_TOKEN = 'test-admin-token';

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
