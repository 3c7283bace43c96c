import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startLocalSchemaRegistry, type LocalSchemaRegistry } from '@sluice/local-schema-registry';
import { uniqueName, waitUntil } from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

const skip = process.env.SLUICE_SKIP_REGISTRY === '1' ? 'SLUICE_SKIP_REGISTRY=1: no schema registry' : false;

/**
 * With `SCHEMA_REGISTRY_URL` set, `sluice.events` carries the Confluent wire format: the delivery
 * log decodes it with the pipeline's codec (a real schema registry, ingest and delivery-log as
 * processes on the real broker) and shows the event with its payload.
 */
describe('delivery log end to end: events in the schema registry wire format', { skip, timeout: 180_000 }, () => {
  let registry: LocalSchemaRegistry;
  let pipeline: Pipeline;
  before(async () => {
    registry = await startLocalSchemaRegistry();
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'ingest'],
      partitions: 1,
      env: { SCHEMA_REGISTRY_URL: registry.url },
    });
  });
  after(async () => {
    await pipeline?.close();
    await registry?.stop();
  });

  it('an event posted to ingest is visible with its payload in the API', async () => {
    const messageId = uniqueName('registry');
    const call = { type: 'track', messageId, userId: 'u-1', event: 'Order Completed', properties: { total: 42.1 } };
    assert.equal((await pipeline.postBatch([call])).status, 200);
    const m = await waitUntil(
      async () => {
        const res = await pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(messageId)}`);
        return res.status === 200 && res.body.event !== null ? res.body : undefined;
      },
      30_000,
      'the event in the delivery log',
    );
    assert.equal(m.event.event, 'Order Completed');
    assert.deepEqual(m.event.properties, { total: 42.1 });
    assert.equal(m.event.userId, 'u-1');
    assert.deepEqual(pipeline.unexpectedExits(), []);
  });
});
