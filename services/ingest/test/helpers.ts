import type { Kafka } from '@sluice/kafka';
import { testConfig, testServiceContext, testKafka } from '@sluice/testkit';
import type { SluiceConfig } from '@sluice/config';
import { createIngest, type IngestService } from '../src/index.ts';

export const WRITE_KEY = 'wk_test_source_a';
export const OTHER_KEY = 'wk_test_source_b';

/** A config with two sources (`src-a` with two keys, `src-b`), plus anything in `raw`. */
export function ingestConfig(raw: Record<string, unknown> = {}): SluiceConfig {
  return testConfig({
    sources: [
      { id: 'src-a', name: 'A', writeKeys: [WRITE_KEY, 'wk_rotated_a'] },
      { id: 'src-b', name: 'B', writeKeys: [OTHER_KEY] },
    ],
    ...raw,
  });
}

export interface RunningIngest {
  url: string;
  service: IngestService;
  config: SluiceConfig;
  kafka: Kafka;
  ctx: ReturnType<typeof testServiceContext>;
}

/** Starts ingest in-process on a free port against the test broker (or `brokers`). */
export async function startIngest(config: SluiceConfig, brokers?: string[]): Promise<RunningIngest> {
  const ctx = testServiceContext('ingest', config);
  if (brokers) ctx.brokers = brokers;
  const service = await createIngest(ctx, { port: 0, host: '127.0.0.1' }).start();
  const kafka = testKafka({ brokers: ctx.brokers, clientId: 'ingest-test-reader', logger: ctx.logger });
  return { url: `http://127.0.0.1:${service.port}`, service, config, kafka, ctx };
}

export const basic = (key: string, colon = true) => `Basic ${Buffer.from(colon ? `${key}:` : key).toString('base64')}`;

/** POSTs JSON (or raw bytes) and returns status, headers and parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const raw = Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}
