// Poison drill: bad records written straight onto the pipeline's topics among 10,000
// good events → every good event delivered, each poison on the rejected topic with its reason,
// no service process exits.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { REJECT_HEADERS, RETRY_HEADERS, retryStateToHeaders } from '@sluice/envelope';
import { createLogger } from '@sluice/logging';
import { readTopic, testKafka } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

const GOOD_EVENTS = 10_000;

/** A track envelope as an upstream producer would write it onto `sluice.events`. */
const envelope = (messageId: string, extra: string) =>
  `{"sourceId":"ledger","type":"track","messageId":"${messageId}","userId":"poison","event":"Poison","timestamp":"2026-11-21T10:00:00.000Z",${extra}}`;

const retryState = {
  messageId: 'poison-redeliver',
  sourceId: 'ledger',
  destinationId: 'ledger-hooks',
  eventType: 'track',
  endpoints: ['http://127.0.0.1:9/hook'],
  firstAttemptAt: Date.now(),
  attempts: 1,
  history: [],
};

/** Each poison, where it is written, and the reason (and rejecting service) expected on the rejected topic. */
const POISONS = [
  {
    id: 'deep',
    topic: 'events',
    value: envelope('poison-deep', `"properties":{"p":${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
    code: 'invalid_envelope',
    origin: 'deliverer',
  },
  { id: 'not-json', topic: 'events', value: 'this is {not JSON', code: 'not_json', origin: 'deliverer' },
  {
    id: 'unrenderable',
    topic: 'events',
    value: envelope('poison-unrenderable', '"timestamp":"the day before yesterday"'),
    code: 'invalid_timestamp',
    origin: 'deliverer',
  },
  {
    id: 'redeliver-headers',
    topic: 'redeliver',
    value: envelope('poison-redeliver', '"properties":{}'),
    code: 'invalid_retry_headers',
    origin: 'deliverer',
    headers: { ...retryStateToHeaders(retryState), [RETRY_HEADERS.history]: '{"not":"a list"}' },
  },
  {
    id: 'retry-headers',
    topic: 'retry',
    value: envelope('poison-retry', '"properties":{}'),
    code: 'invalid_retry_headers',
    origin: 'retry',
    headers: {
      ...retryStateToHeaders(retryState),
      [RETRY_HEADERS.history]: `[{"attempt":1,"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`,
    },
  },
] as const;

it('poison records among 10,000 good events: every good event delivered, each poison rejected with its reason, no process exits', async (t) => {
  pipeline = await Pipeline.start({ endpoints: [() => ({ status: 200 })] });
  const kafka = testKafka({
    brokers: pipeline.brokers.split(','),
    clientId: 'poison-drill',
    logger: createLogger({ name: 'poison-drill', level: 'error' }),
  });
  const producer = kafka.producer();
  await producer.connect();

  const sending = pipeline.send(GOOD_EVENTS, { batchSize: 100 });
  // The poisons go in while the good events flow, on every partition's way.
  await new Promise((r) => setTimeout(r, 300));
  for (const p of POISONS) {
    const headers = 'headers' in p ? { ...p.headers, 'poison-id': p.id } : { 'poison-id': p.id };
    await producer.send({
      topic: pipeline.topics[p.topic]!,
      messages: [{ key: `ledger:${p.id}`, value: p.value, headers }],
    });
  }
  await producer.disconnect();
  const { acked } = await sending;
  assert.equal(acked, GOOD_EVENTS);

  await pipeline.settle(60_000);
  const summary = pipeline.ledger.summary();
  t.diagnostic(formatSummary('poison', summary));
  console.log(formatSummary('poison', summary));
  assert.equal(summary.lost, 0, 'every good event delivered');
  assert.equal(summary.delivered, GOOD_EVENTS);
  assert.equal(summary.badSignatures, 0);

  const rejected = await readTopic(kafka, pipeline.topics.rejected!, {
    count: POISONS.length,
    timeoutMs: 20_000,
    settleMs: 500,
  });
  for (const p of POISONS) {
    const found = rejected.filter((r) => r.key === `ledger:${p.id}`);
    assert.equal(found.length, 1, `${p.id} rejected once (got ${found.length})`);
    assert.equal(found[0]!.headers[REJECT_HEADERS.code], p.code, `${p.id} reason`);
    assert.equal(found[0]!.headers[REJECT_HEADERS.origin], p.origin, `${p.id} rejected by`);
    assert.ok(found[0]!.headers[REJECT_HEADERS.message], `${p.id} carries the failure's message`);
    assert.equal(found[0]!.value?.toString(), p.value, `${p.id} kept byte for byte`);
  }
  assert.equal(rejected.length, POISONS.length, 'nothing else rejected');
  assert.equal(
    pipeline.ledger.arrivals.filter((a) => a.messageId.startsWith('poison-')).length,
    0,
    'no poison reached the receiver',
  );
  for (const [name, svc] of pipeline.services) assert.deepEqual(svc.exits, [], `${name} never exited`);
});
