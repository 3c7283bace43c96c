import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createJsonCodec } from '@sluice/codec';
import type { SluiceConfig } from '@sluice/config';
import {
  REJECT_HEADERS,
  RETRY_HEADERS,
  retryStateToHeaders,
  type DeadReason,
  type EventEnvelope,
} from '@sluice/envelope';
import { SideRecordRefusedError, type ConsumedRecord, type RecordSink } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testConfig, testEnvelope } from '@sluice/testkit';
import type { Message } from 'kafkajs';
import { Registry } from 'prom-client';
import { WebhookThreadError } from '../src/transport/webhook-thread.ts';
import type { Delivery } from '../src/attempt/delivery.ts';
import type { DeadLetter } from '../src/attempt/settle.ts';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { createParkedHandler } from '../src/intake/handle-parked.ts';
import { createRecordHandler } from '../src/intake/handle-record.ts';
import type { Ordering } from '../src/ordering/ordering.ts';
import { parkedHeaders } from '../src/parking/parked-job.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';

// The record handler with fakes for Kafka and HTTP: what it does with one bad record.
const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const config = testConfig({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: [
    { id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: 'https://hooks.example/in' }] } },
  ],
  retry: { window: '1h' },
});
const topics = { events: config.kafka.topics.events, redeliver: config.kafka.topics.redeliver };

interface Fixture {
  handle: (record: ConsumedRecord) => Promise<void>;
  sent: { topic: string; message: Message }[];
  runs: DeliveryJob[];
  dead: { job: DeliveryJob; reason: DeadReason; lastError: string; windowOpenedAt?: number }[];
  metrics: DelivererMetrics;
  /** Records the sink refuses as Kafka refuses an oversized one (`SideRecordRefusedError`). */
  refuses: { when?: (topic: string, message: Message) => boolean };
}

function fixture(
  run: (job: DeliveryJob) => Promise<unknown> = async () => ({ kind: 'delivered' }),
  current: SluiceConfig = config,
  verdicts: [string, boolean][] = [],
): Fixture {
  const sent: Fixture['sent'] = [];
  const runs: DeliveryJob[] = [];
  const dead: Fixture['dead'] = [];
  const refuses: Fixture['refuses'] = {};
  const sink: RecordSink = {
    send: async (topic, message) => {
      if (refuses.when?.(topic, message)) throw new SideRecordRefusedError(topic, 'MESSAGE_TOO_LARGE');
      sent.push({ topic, message });
    },
  };
  const delivery = {
    run: async (job: DeliveryJob) => (runs.push(job), run(job)),
    deadLetter: async (job: DeliveryJob, letter: DeadLetter) => void dead.push({ job, ...letter }),
  } as unknown as Delivery;
  const metrics = new DelivererMetrics(new Registry());
  const handle = createRecordHandler({
    config: () => current,
    topics,
    codec: createJsonCodec(),
    delivery,
    sink,
    metrics,
    logger: createLogger({ name: 'test', level: 'silent' }),
    now: () => NOW,
    watch: { filtered: ({ destinationId, refused }) => void verdicts.push([destinationId, refused]) },
  });
  return { handle, sent, runs, dead, metrics, refuses };
}

const envelope = (extra: Partial<EventEnvelope> = {}) => testEnvelope({ userId: 'u', event: 'E', ...extra });

const record = (topic: string, value: Buffer | string | null, extra: Partial<ConsumedRecord> = {}): ConsumedRecord =>
  ({
    topic,
    partition: 0,
    offset: '7',
    key: Buffer.from('s:u'),
    value: typeof value === 'string' ? Buffer.from(value) : value,
    headers: {},
    timestamp: NOW - 1_000,
    ...extra,
  }) as ConsumedRecord;

const rejectCode = (f: Fixture) => {
  assert.equal(f.sent.length, 1, 'one record on the rejected topic');
  assert.equal(f.sent[0]!.topic, config.kafka.topics.rejected);
  return (f.sent[0]!.message.headers as Record<string, string>)[REJECT_HEADERS.code];
};

const counted = async (f: Fixture, code: string) => {
  const metric = await f.metrics.rejected.get();
  return metric.values.find((v) => v.labels.code === code)?.value ?? 0;
};

describe('record handler: one bad record is rejected, never thrown', () => {
  it('a track call nested 10,000 arrays deep → invalid_envelope (the envelope allows 64 levels), counted, not attempted', async () => {
    const f = fixture();
    const deep = `{"sourceId":"s","type":"track","messageId":"deep","userId":"u","event":"E","timestamp":"2026-11-21T10:00:00.000Z","properties":{"p":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    await f.handle(record(topics.events, deep));
    assert.equal(rejectCode(f), 'invalid_envelope');
    assert.equal(f.runs.length, 0);
    assert.equal(await counted(f, 'invalid_envelope'), 1);
    const headers = f.sent[0]!.message.headers as Record<string, string>;
    assert.equal(headers[REJECT_HEADERS.sourceId], undefined, 'not decoded, so no source is named');
    assert.equal(headers[REJECT_HEADERS.from], `${topics.events}/0/7`);
    assert.equal(String(f.sent[0]!.message.value), deep, 'the rejected value is the record as read');
  });

  it('a record that is not JSON → not_json', async () => {
    const f = fixture();
    await f.handle(record(topics.events, 'this is not json {'));
    assert.equal(rejectCode(f), 'not_json');
  });

  it('an envelope whose timestamp is not a date → invalid_timestamp', async () => {
    const f = fixture();
    await f.handle(record(topics.events, JSON.stringify(envelope({ timestamp: 'yesterday-ish' }))));
    assert.equal(rejectCode(f), 'invalid_timestamp');
  });

  it('a delivery that throws for this record → undeliverable with the error message; the handler resolves', async () => {
    const f = fixture(async () => {
      throw new TypeError('previous.history is not iterable');
    });
    await f.handle(record(topics.events, JSON.stringify(envelope())));
    assert.equal(rejectCode(f), 'undeliverable');
    assert.match(
      (f.sent[0]!.message.headers as Record<string, string>)[REJECT_HEADERS.message]!,
      /TypeError: previous\.history is not iterable/,
    );
    assert.equal(await counted(f, 'undeliverable'), 1);
  });

  it('a side record Kafka refused (its retry too large) → undeliverable; the handler resolves', async () => {
    const f = fixture(async (job) => {
      throw new SideRecordRefusedError(config.kafka.topics.retry, 'MESSAGE_TOO_LARGE', { cause: job.messageId });
    });
    const value = JSON.stringify(envelope());
    await f.handle(record(topics.events, value));
    assert.equal(rejectCode(f), 'undeliverable');
    const headers = f.sent[0]!.message.headers as Record<string, string>;
    assert.match(headers[REJECT_HEADERS.message]!, /SideRecordRefusedError: .*MESSAGE_TOO_LARGE/);
    assert.equal(String(f.sent[0]!.message.value), value, 'the rejected record keeps the value when Kafka takes it');
    assert.equal(headers[REJECT_HEADERS.valueDropped], undefined);
  });

  it('a rejected record Kafka refuses whole is written without its value; refused even so, it is dropped: the handler resolves', async () => {
    const f = fixture(async () => {
      throw new SideRecordRefusedError(config.kafka.topics.retry, 'MESSAGE_TOO_LARGE');
    });
    f.refuses.when = (topic, message) => topic === config.kafka.topics.rejected && message.value !== null;
    await f.handle(record(topics.events, JSON.stringify(envelope())));
    assert.equal(rejectCode(f), 'undeliverable');
    const headers = f.sent[0]!.message.headers as Record<string, string>;
    assert.equal(f.sent[0]!.message.value, null);
    assert.equal(headers[REJECT_HEADERS.valueDropped], 'MESSAGE_TOO_LARGE');
    assert.equal(headers[REJECT_HEADERS.from], `${topics.events}/0/7`, 'still says where the original is');

    const g = fixture();
    g.refuses.when = (topic) => topic === config.kafka.topics.rejected;
    await g.handle(record(topics.events, 'this is not json {'));
    assert.equal(g.sent.length, 0, 'nothing written, and nothing thrown');
    assert.equal(await counted(g, 'not_json'), 1);
  });

  it('an infrastructure failure (the webhook thread died) is thrown on, and nothing is rejected', async () => {
    const f = fixture(async () => {
      throw new WebhookThreadError('webhook thread exited (code 1)');
    });
    await assert.rejects(f.handle(record(topics.events, JSON.stringify(envelope()))), WebhookThreadError);
    assert.equal(f.sent.length, 0);
  });

  const state = {
    messageId: 'm-r',
    sourceId: 's',
    destinationId: 'd',
    eventType: 'track',
    endpoints: ['https://hooks.example/in'],
    firstAttemptAt: NOW - 60_000,
    attempts: 1,
    history: [],
  };
  const redeliverHeaders: [string, Record<string, string>][] = [
    ['no retry state at all', {}],
    ['a history that is not an array', { ...retryStateToHeaders(state), [RETRY_HEADERS.history]: '{"attempt":1}' }],
    [
      'a history entry nested 10,000 deep',
      {
        ...retryStateToHeaders(state),
        [RETRY_HEADERS.history]: `[{"attempt":1,"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`,
      },
    ],
    ['endpoints that are not a list of URLs', { ...retryStateToHeaders(state), [RETRY_HEADERS.endpoints]: '{"a":1}' }],
    [
      'a first-attempt time that is not a number',
      { ...retryStateToHeaders(state), [RETRY_HEADERS.firstAttemptAt]: 'soon' },
    ],
  ];
  for (const [what, headers] of redeliverHeaders) {
    it(`a redeliver record with ${what} → invalid_retry_headers`, async () => {
      const f = fixture();
      await f.handle(record(topics.redeliver, '{"type":"track"}', { headers }));
      assert.equal(rejectCode(f), 'invalid_retry_headers');
      assert.equal(f.runs.length, 0);
    });
  }
});

describe('record handler: filters (docs/reference/filters.md)', () => {
  const hooks = { webhooks: [{ url: 'https://hooks.example/in' }] };
  const filtering = testConfig({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [
      { id: 'only-identify', type: 'webhooks', sourceIds: ['s'], settings: hooks, filter: { types: ['identify'] } },
      { id: 'orders', type: 'webhooks', sourceIds: ['s'], settings: hooks, filter: { events: ['Order *'] } },
      { id: 'all', type: 'webhooks', sourceIds: ['s'], settings: hooks },
    ],
    kafka: { topics: config.kafka.topics },
  });

  it('a refused destination gets one filtered record (attempt 0, no endpoint) and the metric; the others are attempted', async () => {
    const f = fixture(undefined, filtering);
    await f.handle(record(topics.events, JSON.stringify(envelope({ messageId: 'm-f', event: 'Signed Up' }))));
    assert.deepEqual(
      f.runs.map((j) => j.destinationId),
      ['all'],
    );
    assert.equal(f.sent.length, 2, 'one filtered record per refusing destination');
    const records = f.sent.map((s) => {
      assert.equal(s.topic, config.kafka.topics.attempts);
      assert.equal(String(s.message.key), 's:u');
      return JSON.parse(String(s.message.value));
    });
    for (const [i, destinationId] of ['only-identify', 'orders'].entries()) {
      assert.deepEqual(records[i], {
        messageId: 'm-f',
        sourceId: 's',
        destinationId,
        eventType: 'track',
        endpoint: '',
        attempt: 0,
        outcome: 'filtered',
        latencyMs: 0,
        at: new Date(NOW).toISOString(),
      });
    }
    const counts = (await f.metrics.filtered.get()).values.map((v) => [v.labels.destination, v.value]);
    assert.deepEqual(counts, [
      ['only-identify', 1],
      ['orders', 1],
    ]);
  });

  it('tells the operator watch each verdict of a filter (a filter refusing everything is an operator event)', async () => {
    const verdicts: [string, boolean][] = [];
    const f = fixture(undefined, filtering, verdicts);
    await f.handle(record(topics.events, JSON.stringify(envelope({ messageId: 'm-v', event: 'Order Completed' }))));
    assert.deepEqual(verdicts, [
      ['only-identify', true],
      ['orders', false],
    ]);
  });

  it('a call every filter accepts writes nothing and goes to every destination; one all refuse is not rendered', async () => {
    const f = fixture(undefined, filtering);
    await f.handle(record(topics.events, JSON.stringify(envelope({ type: 'identify', traits: {} }))));
    assert.deepEqual(
      f.runs.map((j) => j.destinationId),
      ['only-identify', 'orders', 'all'],
    );
    assert.equal(f.sent.length, 0);
  });

  it('a retry is not filtered again: it is of an event the filter let through', async () => {
    const f = fixture(undefined, filtering);
    const headers = retryStateToHeaders({
      messageId: 'm-r',
      sourceId: 's',
      destinationId: 'only-identify',
      eventType: 'track',
      endpoints: ['https://hooks.example/in'],
      firstAttemptAt: NOW,
      attempts: 1,
      history: [],
    });
    await f.handle(record(topics.redeliver, '{"type":"track"}', { headers, timestamp: NOW }));
    assert.deepEqual(
      f.runs.map((j) => j.destinationId),
      ['only-identify'],
    );
    assert.equal(f.sent.length, 0);
  });
});

describe('record handler: the window', () => {
  it('an event accepted longer than the window ago is dead-lettered window_exhausted, not attempted', async () => {
    const f = fixture();
    const acceptedAt = NOW - 3_600_000 - 1;
    await f.handle(record(topics.events, JSON.stringify(envelope()), { timestamp: acceptedAt }));
    assert.equal(f.runs.length, 0);
    assert.equal(f.dead.length, 1);
    assert.equal(f.dead[0]!.reason, 'window_exhausted');
    assert.equal(f.dead[0]!.windowOpenedAt, acceptedAt);
  });

  it('an event accepted within the window is attempted', async () => {
    const f = fixture();
    await f.handle(record(topics.events, JSON.stringify(envelope()), { timestamp: NOW - 3_600_000 }));
    assert.equal(f.runs.length, 1);
    assert.equal(f.dead.length, 0);
  });

  it('a retry whose window (from its first attempt) closed is dead-lettered with its history kept by the job', async () => {
    const f = fixture();
    const history = [
      {
        attempt: 1,
        endpoint: 'https://hooks.example/in',
        at: NOW - 2 * 3_600_000,
        outcome: 'retryable' as const,
        error: 'timeout',
        latencyMs: 5_000,
      },
    ];
    const headers = retryStateToHeaders({ ...state(), firstAttemptAt: NOW - 2 * 3_600_000, history });
    await f.handle(record(topics.redeliver, '{"type":"track"}', { headers, timestamp: NOW }));
    assert.equal(f.runs.length, 0);
    assert.equal(f.dead[0]!.reason, 'window_exhausted');
    assert.deepEqual(f.dead[0]!.job.previous?.history, history);
  });

  function state() {
    return {
      messageId: 'm-r',
      sourceId: 's',
      destinationId: 'd',
      eventType: 'track',
      endpoints: ['https://hooks.example/in'],
      firstAttemptAt: NOW,
      attempts: 1,
      history: [],
    };
  }
});

describe('record handler: events of a destination gone or disabled, on their way back', () => {
  const redelivered = (destinationId: string) =>
    retryStateToHeaders({
      messageId: `m-${destinationId}`,
      sourceId: 's',
      destinationId,
      eventType: 'track',
      endpoints: ['https://hooks.example/in'],
      firstAttemptAt: NOW - 60_000,
      attempts: 2,
      history: [],
    });
  const parkedJob = (destinationId: string): DeliveryJob => ({
    key: 's:u',
    body: Buffer.from('{"type":"track"}'),
    messageId: `p-${destinationId}`,
    sourceId: 's',
    destinationId,
    eventType: 'track',
    endpoints: ['https://hooks.example/in'],
  });
  /** The live and the parked handler over one config, Delivery and ordering fakes. */
  const handlers = (current: SluiceConfig) => {
    const dead: string[] = [];
    const left: string[] = [];
    const runs: string[] = [];
    const delivery = {
      run: async (job: DeliveryJob) => (runs.push(job.messageId), { kind: 'delivered' }),
      deadLetter: async (job: DeliveryJob, letter: DeadLetter) =>
        void dead.push(
          `${job.messageId} ${letter.reason}: ${letter.lastError} (attempts ${job.previous?.attempts ?? 0})`,
        ),
    } as unknown as Delivery;
    const ordering = {
      deadLetteredAtIntake: async (job: DeliveryJob, partition: number) =>
        void left.push(`${job.messageId}@${partition}`),
    } as unknown as Ordering;
    const deps = {
      config: () => current,
      topics,
      codec: createJsonCodec(),
      delivery,
      sink: { send: async () => undefined } as RecordSink,
      metrics: new DelivererMetrics(new Registry()),
      logger: createLogger({ name: 'test', level: 'silent' }),
      now: () => NOW,
      ordering,
    };
    return { live: createRecordHandler(deps), parked: createParkedHandler(deps), dead, left, runs };
  };
  const disabled = testConfig({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd',
        type: 'webhooks',
        enabled: false,
        sourceIds: ['s'],
        settings: { webhooks: [{ url: 'https://hooks.example/in' }] },
      },
    ],
    retry: { window: '1h' },
  });

  it('a redelivery of a gone destination is dead-lettered destination_deleted (attempts kept), not attempted; its queue is told', async () => {
    const h = handlers(config);
    await h.live(record(topics.redeliver, '{"type":"track"}', { headers: redelivered('gone'), partition: 3 }));
    assert.deepEqual(h.dead, ['m-gone destination_deleted: destination gone is gone (attempts 2)']);
    assert.deepEqual(h.left, ['m-gone@3']);
    assert.deepEqual(h.runs, []);
  });

  it('a parked record of a gone destination is dead-lettered destination_deleted, not attempted; its queue is told', async () => {
    const h = handlers(config);
    const job = parkedJob('gone');
    const headers = parkedHeaders(job, NOW - 1_000, NOW - 500);
    await h.parked(record(`${config.kafka.topics.parkedPrefix}gone`, job.body, { headers, partition: 2 }));
    assert.deepEqual(h.dead, ['p-gone destination_deleted: destination gone is gone (attempts 0)']);
    assert.deepEqual(h.left, ['p-gone@2']);
    assert.deepEqual(h.runs, []);
  });

  it('a destination that exists but is disabled keeps no_endpoints, for a redelivery and a parked record alike', async () => {
    const h = handlers(disabled);
    await h.live(record(topics.redeliver, '{"type":"track"}', { headers: redelivered('d') }));
    const job = parkedJob('d');
    await h.parked(record(`${config.kafka.topics.parkedPrefix}d`, job.body, { headers: parkedHeaders(job, NOW, NOW) }));
    assert.deepEqual(h.dead, [
      'm-d no_endpoints: destination d is disabled (attempts 2)',
      'p-d no_endpoints: destination d is disabled (attempts 0)',
    ]);
    assert.deepEqual(h.runs, []);
  });
});
