import { retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { createKafka, ensureTopics, topicSpecs, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import type { SluiceConfig } from '@sluice/config';
import { testBrokers, uniqueName } from '@sluice/testkit';

export const logger = createLogger({ name: 'retry-test', level: process.env.LOG_LEVEL ?? 'warn' });

export function testKafka(): Kafka {
  return createKafka({ brokers: testBrokers(), clientId: uniqueName('retry-test'), logger });
}

export async function createTopics(kafka: Kafka, config: SluiceConfig): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config));
  await admin.disconnect();
}

export function retryState(overrides: Partial<RetryState> = {}): RetryState {
  const now = Date.now();
  return {
    messageId: uniqueName('msg'),
    sourceId: 'src-1',
    destinationId: 'dest-1',
    eventType: 'track',
    endpoints: ['http://127.0.0.1:9/hook'],
    firstAttemptAt: now,
    attempts: 1,
    history: [
      {
        attempt: 1,
        endpoint: 'http://127.0.0.1:9/hook',
        at: now,
        outcome: 'retryable',
        status: 500,
        error: 'http_500',
        latencyMs: 3,
      },
    ],
    ...overrides,
  };
}

export function retryMessage(state: RetryState, body = `{"messageId":"${state.messageId}"}`) {
  return { key: `${state.sourceId}:user-1`, value: Buffer.from(body), headers: retryStateToHeaders(state) };
}

export interface Seen {
  at: number;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

/** A background reader that keeps every record of a topic with the time it was read. */
export async function watchTopic(kafka: Kafka, topic: string): Promise<{ seen: Seen[]; stop(): Promise<void> }> {
  const consumer = kafka.consumer({ groupId: uniqueName('watch'), maxWaitTimeInMs: 20 });
  const seen: Seen[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {}))
        if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
      seen.push({
        at: Date.now(),
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value,
        headers,
      });
    },
  });
  return { seen, stop: () => consumer.disconnect() };
}
