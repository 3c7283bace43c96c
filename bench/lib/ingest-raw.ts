import { createJsonCodec } from '@sluice/codec';
import { recordKey } from '@sluice/envelope';
import type { KafkaSecurity } from '@sluice/config';
import { createKafka, SafeProducer, type Message } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { normaliseCall, splitBody } from '@sluice/ingest';

/**
 * The records ingest writes for `bodies`, built exactly as ingest builds them (same
 * normalisation, codec and key), so the raw ceiling sends the same bytes. Built before the
 * timed loop: the ceiling measures kafkajs and the broker only.
 */
export async function ingestRecords(bodies: Buffer[], sourceId: string, ip: string): Promise<Message[]> {
  const codec = createJsonCodec();
  const receivedAt = Date.now();
  const out: Message[] = [];
  for (const raw of bodies) {
    const body = splitBody(JSON.parse(raw.toString('utf8')), 2500);
    const facts = {
      sourceId,
      receivedAt,
      ip,
      ...(body.sentAt !== undefined && { batchSentAt: body.sentAt }),
      maxCallBytes: 32_000,
      newMessageId: () => 'unused',
    };
    for (let i = 0; i < body.calls.length; i++) {
      const result = normaliseCall(body.calls[i], i, facts);
      if (!result.ok) throw new Error(`bench call rejected: ${result.rejection.message}`);
      out.push({ key: recordKey(result.envelope), value: await codec.encode(result.envelope) });
    }
  }
  return out;
}

export interface RawOptions {
  brokers: string[];
  /** TLS/SASL of the run (bench/lib/kafka-security.ts). */
  security?: KafkaSecurity;
  topic: string;
  records: Message[];
  seconds: number;
  /** Producer instances (each idempotent, acks=-1, one request in flight). */
  producers: number;
  /** Records per `sendBatch`. */
  perBatch: number;
  /** `sendBatch` calls outstanding per producer (kafkajs queues them on the connection). */
  inFlightPerProducer: number;
}

/** Raw kafkajs ceiling: `SafeProducer.sendBatch` of pre-built records as fast as acks come back. */
export async function rawCeiling(options: RawOptions): Promise<{ events: number; seconds: number }> {
  const logger = createLogger({ name: 'bench', level: 'error' });
  const kafka = createKafka({
    brokers: options.brokers,
    clientId: 'bench-raw',
    logger,
    ...(options.security && { security: options.security }),
  });
  const producers = Array.from({ length: options.producers }, () => new SafeProducer(kafka));
  await Promise.all(producers.map((p) => p.connect()));
  // Untimed warm-up: metadata of a topic created a moment ago can take a while to be served.
  for (let attempt = 0; ; attempt++) {
    try {
      await Promise.all(
        producers.map((p) =>
          p.sendBatch([{ topic: options.topic, messages: options.records.slice(0, options.perBatch) }]),
        ),
      );
      break;
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const batches = Math.floor(options.records.length / options.perBatch);
  let events = 0;
  let n = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  await Promise.all(
    producers.flatMap((producer) =>
      Array.from({ length: options.inFlightPerProducer }, async () => {
        while (performance.now() < deadline) {
          const start = (n++ % batches) * options.perBatch;
          await producer.sendBatch([
            { topic: options.topic, messages: options.records.slice(start, start + options.perBatch) },
          ]);
          events += options.perBatch;
        }
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(producers.map((p) => p.disconnect()));
  return { events, seconds };
}
