import type { CatalogProducer, CatalogWriter } from '@sluice/destination-catalog';
import type { SafeProducer } from '@sluice/kafka';

/** The hot source: the one the benchmark's events come from, with the same one destination at every size. */
export const HOT_SOURCE = 's-bench';
/** The hot source's destination (last in id order among the runtime ones: the worst place for a scan by id). */
export const HOT_DESTINATION = 'zz-hot';

/** The sources of the config file the runtime destinations spread over (besides the hot one). */
export function benchSources(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `s${String(i).padStart(3, '0')}`);
}

/** The id of spread destination `i`. */
export const spreadId = (i: number): string => `d${String(i).padStart(5, '0')}`;

/**
 * Spread destination `i`: one of `sources` (in turn), 1–5 endpoints (a fifth of the destinations
 * each), every endpoint on an origin of its own in 127.0.0.0/8 (allowed by the benchmark's SSRF
 * policy; never called: no event comes from these sources), a header on every third, a filter on
 * every fourth. `version` changes the URLs (a change of the destination).
 */
export function spreadDefinition(i: number, sources: readonly string[], version = 0): Record<string, unknown> {
  const id = spreadId(i);
  const endpoints = 1 + (Math.floor(i / sources.length) % 5);
  const host = (k: number) => `127.${(i >> 8) & 255}.${i & 255}.${k + 1}`;
  return {
    id,
    type: 'webhooks',
    sourceIds: [sources[i % sources.length]!],
    settings: {
      webhooks: Array.from({ length: endpoints }, (_, k) => ({
        url: `http://${host(k)}:8080/hooks/${id}/${k}?v=${version}`,
        ...(k === 0 && i % 3 === 0 && { headers: { Authorization: `Bearer token-${id}-0123456789abcdef` } }),
      })),
    },
    ...(i % 4 === 0 && { filter: { types: ['track'], events: ['Order *'] } }),
  };
}

/** The hot source's one destination, at the benchmark's receiver. */
export function hotDefinition(receiverOrigin: string): Record<string, unknown> {
  return {
    id: HOT_DESTINATION,
    type: 'webhooks',
    sourceIds: [HOT_SOURCE],
    settings: { webhooks: [{ url: `${receiverOrigin}/hook` }] },
  };
}

type Send = SafeProducer['send'];
type Sent = Awaited<ReturnType<Send>>;

/**
 * A `CatalogProducer` over one `SafeProducer` that sends the records of every `send` made while
 * one is in flight together, in one request: `CatalogWriter`s run concurrently then write a
 * catalog of thousands in seconds (one request each would take one acknowledgement per record).
 * Each caller gets its own records' offset (the topic has one partition, so a batch's records are
 * at consecutive offsets). `onAck` hears of each caller's acknowledgement: its first offset and when.
 */
export class CoalescingProducer implements CatalogProducer {
  readonly #producer: Pick<SafeProducer, 'send'>;
  #queue: {
    topic: string;
    messages: Parameters<Send>[1];
    resolve: (sent: Sent) => void;
    reject: (err: unknown) => void;
  }[] = [];
  #sending = false;
  /** Records per request sent (for the report). */
  requests = 0;
  onAck: ((offset: number, at: number) => void) | undefined;

  constructor(producer: Pick<SafeProducer, 'send'>) {
    this.#producer = producer;
  }

  send(topic: string, messages: Parameters<Send>[1]): Promise<Sent> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ topic, messages, resolve, reject });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#queue.length > 0) {
        const topic = this.#queue[0]!.topic;
        const batch = [];
        while (this.#queue[0]?.topic === topic && batch.length < 1_000) batch.push(this.#queue.shift()!);
        try {
          this.requests += 1;
          const [meta] = await this.#producer.send(
            topic,
            batch.flatMap((b) => b.messages),
          );
          const at = performance.timeOrigin + performance.now();
          if (meta?.baseOffset === undefined) throw new Error(`no offset in the answer for ${topic}`);
          let offset = Number(meta.baseOffset);
          for (const b of batch) {
            this.onAck?.(offset, at);
            b.resolve([{ ...meta, baseOffset: String(offset) }]);
            offset += b.messages.length;
          }
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.#sending = false;
    }
  }
}

/** Creates each definition with `writer`, `concurrency` at a time; throws on the first outcome that is not `created`. */
export async function createAll(
  writer: CatalogWriter,
  definitions: Iterable<Record<string, unknown>>,
  concurrency: number,
): Promise<void> {
  const iterator = definitions[Symbol.iterator]();
  const by = 'bench';
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = iterator.next(); !next.done; next = iterator.next()) {
        const outcome = await writer.create({ by, at: Date.now(), definition: next.value });
        if (outcome.kind !== 'created')
          throw new Error(`creating ${String(next.value.id)}: ${outcome.kind} ${JSON.stringify(outcome)}`);
      }
    }),
  );
}
