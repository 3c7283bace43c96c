import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  metric,
  type ReceivedRequest,
  type Receiver,
  sleep,
  startReceiver,
  testKafka,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

const OPERATOR_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Auto-disable with a shrunk time (docs/reference/destination-actions.md): an endpoint that only
 * answers 503 is disabled after `delivery.autoDisable.after` (1 s here) of attempts without a 2xx;
 * the operator receives a signed `endpoint.disabled` event (verified with the reference
 * `standardwebhooks` library); the API shows the endpoint disabled by `sluice`; `POST …/enable`
 * makes it active again, the operator is told, and events are delivered again.
 */
describe('auto-disable and operator events', { timeout: 180_000 }, () => {
  let pipeline: Pipeline;
  let operator: Receiver;
  let healthy = false;
  const run = uniqueName('ad');
  let seq = 0;
  const track = () => ({ type: 'track', messageId: `${run}-${++seq}`, userId: 'u-1', event: 'Auto Disable Test' });
  const operatorEvents = () =>
    operator.requests.map((r: ReceivedRequest) => {
      const headers = {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      };
      // Throws unless the signature verifies with the operator secret.
      return new Webhook(OPERATOR_SECRET).verify(r.body.toString('utf8'), headers) as Record<string, any>;
    });

  before(async () => {
    operator = await startReceiver();
    pipeline = await Pipeline.start({
      endpoints: [() => (healthy ? { status: 200, body: 'ok' } : { status: 503, body: 'down' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      config: {
        delivery: { timeout: '2s', autoDisable: { after: '1s' }, circuitBreaker: { failures: 1000 } },
        operatorEvents: { url: operator.url, secret: OPERATOR_SECRET },
      },
    });
  });
  after(async () => {
    await pipeline?.close();
    await operator?.close();
  });

  it('disables the always-503 endpoint after the shrunk time and tells the operator, signed', async () => {
    const endpoint = pipeline.receivers[0]!.url;
    // Events keep coming; each is attempted (503) until the endpoint has failed for 1 s.
    const event = await waitUntil(
      async () => {
        await pipeline.postBatch([track()]);
        await sleep(150);
        return operatorEvents().find((e) => e.type === 'endpoint.disabled');
      },
      60_000,
      'the operator event',
    );
    assert.equal(event.destinationId, 'ledger-hooks');
    assert.equal(event.endpointRef, endpoint);
    assert.equal(event.by, 'sluice');
    assert.equal(event.byTokenId, 'sluice');
    assert.equal(event.auto, true);
    assert.match(event.reason, /^no 2xx since .+; last error: http_503$/);
    assert.ok(!Number.isNaN(Date.parse(event.at)));

    const state = await waitUntil(
      async () => {
        const d = (await pipeline.deliveryLog('/api/v1/destinations')).body.destinations[0];
        return d.endpointStates[0].state === 'disabled' ? d.endpointStates[0] : undefined;
      },
      10_000,
      'the API shows the endpoint disabled',
    );
    assert.equal(state.auto, true);
    assert.equal(state.by, 'sluice');
    // Listed once the log has read the action from its topic into its database.
    const actions = await waitUntil(
      async () => {
        const listed = (await pipeline.deliveryLog('/api/v1/destination-actions')).body.actions;
        return listed[0]?.action === 'disable' ? listed : undefined;
      },
      10_000,
      'the API lists the auto-disable',
    );
    assert.equal(actions[0].auto, true);
    assert.equal(actions[0].by, 'sluice');
    assert.equal(actions[0].byTokenId, 'sluice', "Sluice's own token id");
    assert.ok((await metric(pipeline.service('deliverer').url, 'sluice_deliverer_auto_disabled_total')) >= 1);
  });

  it('while disabled events wait; enable makes the endpoint active again, tells the operator who did it, and delivers what waited', async () => {
    // The deliverer tells of actions written after its actions consumer joined its group (it starts at the end).
    const admin = testKafka({ brokers: pipeline.brokers.split(',') }).admin();
    await admin.connect();
    try {
      const clientId = (pipeline.raw.kafka as { clientId: string }).clientId;
      const groupId = `${clientId}.deliverer.operator-events`;
      await waitUntil(
        async () => (await admin.describeGroups([groupId])).groups[0]?.state === 'Stable',
        30_000,
        'the operator-events group stable',
      );
    } finally {
      await admin.disconnect();
    }
    // Events that arrive while the endpoint is disabled wait, parked on Kafka: no request is made.
    const waiting = Array.from({ length: 5 }, (_, i) => `${run}-waiting-${i}`);
    const deliverer = pipeline.service('deliverer').url;
    const parkedBefore = await metric(deliverer, 'sluice_deliverer_parked_total');
    await pipeline.postBatch(waiting.map((messageId) => ({ ...track(), messageId })));
    await waitUntil(
      async () => (await metric(deliverer, 'sluice_deliverer_parked_total')) >= parkedBefore + waiting.length,
      15_000,
      'the events sent while disabled parked',
    );
    const requestsFor = (id: string) => pipeline.receivers[0]!.requests.filter((r) => r.headers['x-message-id'] === id);
    assert.deepEqual(waiting.flatMap(requestsFor), [], 'no request for an event sent while the endpoint is disabled');
    healthy = true;
    const ref = encodeURIComponent(pipeline.receivers[0]!.url);
    const enabled = await pipeline.deliveryLog(`/api/v1/destinations/ledger-hooks/endpoints/${ref}/enable`, {
      method: 'POST',
      body: { reason: 'receiver fixed', by: 'oncall' },
    });
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.state, 'active');
    const told = await waitUntil(
      async () => operatorEvents().find((e) => e.type === 'endpoint.enabled'),
      30_000,
      'the operator told of the enable',
    );
    assert.equal(told.by, 'admin', 'the name of the token that acted');
    assert.equal(told.byTokenId, 'admin', 'and its id');
    assert.equal(told.reason, 'receiver fixed');
    await waitUntil(
      () => waiting.every((id) => requestsFor(id).length > 0),
      30_000,
      'the events that waited delivered after enable',
    );
    const id = `${run}-after`;
    await pipeline.postBatch([{ ...track(), messageId: id }]);
    await waitUntil(
      async () => pipeline.receivers[0]!.requests.some((r) => r.headers['x-message-id'] === id && healthy),
      30_000,
      'an event after enable delivered',
    );
  });
});
