import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uniqueName, waitUntil } from '@sluice/testkit';
import { Pipeline, WRITE_KEY } from '../support/pipeline.ts';

/**
 * No record stops the delivery log (docs/delivery-log.md, "Events the database's JSON refuses"):
 * ingest, deliverer and delivery-log as processes on the real broker; calls whose numbers
 * PostgreSQL's numeric refuses or blows up, NUL, a lone surrogate, duplicate keys and deep
 * nesting posted to ingest as raw text, then an ordinary event. The ordinary event is in the API
 * within seconds, no service exits, and every odd call ingest accepted is findable in the log.
 */
describe('delivery log end to end: hostile events', { timeout: 180_000 }, () => {
  let pipeline: Pipeline;
  const run = uniqueName('hostile');
  const odd: Record<string, string> = {
    'underflow-16384': '1e-16384',
    'underflow-20000': '1e-20000',
    'long-fraction': `0.${'0'.repeat(16_400)}1`,
    'overflow-400': '1e400',
    'prints-16k': '1e-16383',
    nul: '"a\\u0000b"',
    'lone-surrogate': '"\\ud800"',
    'duplicate-keys': '{"a":1,"a":2}',
    'deep-10000': `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  };
  const post = async (messageId: string, raw: string) => {
    const res = await fetch(`${pipeline.service('ingest').url}/v1/track`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
      },
      body: `{"userId":"u1","event":"P","messageId":"${messageId}","properties":{"n":${raw}}}`,
    });
    await res.arrayBuffer();
    return res.status;
  };
  const message = async (messageId: string) => {
    const res = await pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(messageId)}`);
    return res.status === 200 ? res.body : undefined;
  };

  before(async () => {
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 1,
    });
  });
  after(() => pipeline?.close());

  it('the ordinary event after them is in the API within seconds; each accepted odd one is findable; no exit', async () => {
    const accepted: string[] = [];
    for (const [name, raw] of Object.entries(odd)) {
      const id = `${name}-${run}`;
      const status = await post(id, raw);
      if (['underflow-16384', 'underflow-20000', 'long-fraction', 'overflow-400', 'prints-16k'].includes(name))
        assert.equal(status, 200, `${name}: ingest accepts it`);
      if (status === 200) accepted.push(id);
    }
    const ordinary = `ordinary-${run}`;
    assert.equal(await post(ordinary, '1'), 200);
    const started = Date.now();
    const seen = await waitUntil(() => message(ordinary), 30_000, 'the ordinary event in the API');
    const seconds = (Date.now() - started) / 1_000;
    assert.deepEqual(seen.event.properties, { n: 1 });
    assert.deepEqual(pipeline.unexpectedExits(), []);
    for (const id of accepted) {
      const m = await waitUntil(() => message(id), 10_000, `${id} in the API`);
      assert.ok(
        m.event !== null || m.eventText !== null || m.deliveries.some((d: { state: string }) => d.state === 'rejected'),
        id,
      );
      if (m.event === null && m.eventText !== null) assert.ok(m.eventNote, `${id}: kept as text with its reason`);
      assert.ok(JSON.stringify(m).length < 300 * 1024, `${id}: its view is bounded`);
    }
    const prints = await message(`prints-16k-${run}`);
    assert.equal(prints.eventNote, 'number_out_of_range', 'a number PostgreSQL prints back as 16 KB is kept as text');
    assert.deepEqual(pipeline.unexpectedExits(), []);
    console.log(`# ordinary event in the API ${seconds.toFixed(1)} s after it was posted`);
  });
});
