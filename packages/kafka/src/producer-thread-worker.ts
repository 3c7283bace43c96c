// The producer thread's entry point: owns the Kafka producers (SafeProducer: idempotent, acks=-1,
// one request in flight each) so that kafkajs's record encoding runs beside, not inside, the
// service's main thread. Messages from the parent: { kind: 'send', id, packed | topicMessages } and
// { kind: 'close' }; replies: ready, connected, sent, failed, closed.
import { parentPort, workerData } from 'node:worker_threads';
import { createKafka } from './kafka-client.ts';
import { SafeProducer } from './producer.ts';
import { isRetriableKafkaError } from './retriable-error.ts';
import { createLogger, logProcessWarnings } from '@sluice/logging';
import type { TopicMessages } from 'kafkajs';
import type { KafkaSecurity } from '@sluice/config';
import { kafkaErrorType } from './record-refusal.ts';
import { reviveCloned, unpackBatch, type PackedBatch } from './record-packing.ts';

export interface ProducerThreadOptions {
  /** The owning service's name, for the thread's logs. */
  service: string;
  brokers: string[];
  clientId: string;
  /** TLS and SASL settings (`kafka.ssl`, `kafka.sasl`); in the thread, plain data (file paths, resolved secrets). */
  security?: KafkaSecurity;
  logLevel: string;
  /** SafeProducer instances in the thread; batches go round-robin. */
  producers: number;
}

export type ToProducerThread =
  | { kind: 'send'; id: number; packed?: PackedBatch; topicMessages?: TopicMessages[] }
  | { kind: 'close' };
export type FromProducerThread =
  | { kind: 'ready' }
  | { kind: 'start-failed'; message: string; retriable: boolean }
  | { kind: 'connected'; connected: boolean }
  | { kind: 'sent'; id: number }
  | { kind: 'failed'; id: number; message: string; name: string; type?: string }
  | { kind: 'closed' };

const port = parentPort!;
const data = workerData as ProducerThreadOptions;
const post = (m: FromProducerThread) => port.postMessage(m);
const logger = createLogger({ name: data.service, level: data.logLevel as 'info' }).child({
  component: 'producer-thread',
});
logProcessWarnings(logger);
const kafka = createKafka({
  brokers: data.brokers,
  clientId: data.clientId,
  logger,
  ...(data.security && { security: data.security }),
});
const producers = Array.from({ length: data.producers }, () => new SafeProducer(kafka));
let next = 0;

const reportConnected = () => post({ kind: 'connected', connected: producers.every((p) => p.connected) });
for (const p of producers) p.onConnectionChange(reportConnected);

port.on('message', (msg: ToProducerThread) => {
  if (msg.kind === 'send') {
    const topicMessages = msg.packed ? unpackBatch(msg.packed) : reviveCloned(msg.topicMessages!);
    const producer = producers[next++ % producers.length]!;
    producer.sendBatch(topicMessages).then(
      () => post({ kind: 'sent', id: msg.id }),
      (err: Error) => {
        const type = kafkaErrorType(err);
        post({
          kind: 'failed',
          id: msg.id,
          message: err?.message ?? String(err),
          name: err?.name ?? 'Error',
          ...(type !== undefined && { type }),
        });
      },
    );
  } else if (msg.kind === 'close') {
    // kafkajs resolves in-flight sends before it disconnects.
    void Promise.allSettled(producers.map((p) => p.disconnect())).then(() => {
      post({ kind: 'closed' });
      port.close();
    });
  }
});

try {
  await Promise.all(producers.map((p) => p.connect()));
  post({ kind: 'ready' });
  reportConnected();
} catch (err) {
  post({ kind: 'start-failed', message: (err as Error).message, retriable: isRetriableKafkaError(err) });
}
