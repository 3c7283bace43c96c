import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConfigStore, type SluiceConfig } from '@sluice/config';
import { prefixedTopics, type Receiver, startReceiver, testServiceContext, uniqueName } from '@sluice/testkit';
import { testEnvelope, testKafka } from '@sluice/testkit';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-reload-'));
const path = join(dir, 'sluice.json');
let receiver: Receiver;
let service: DelivererService;
let store: ConfigStore;
let threadDied = false;
let sent = 0;
const prefix = uniqueName('reload');

function rawConfig(allowCidrs: string[], prefix: string): Record<string, unknown> {
  const topics = prefixedTopics(prefix);
  return {
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [{ id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: receiver.url }] } }],
    kafka: {
      clientId: prefix,
      partitions: 1,
      replicationFactor: 1,
      topics,
    },
    delivery: { ssrf: { allowCidrs } },
  };
}

const event = () => testEnvelope({ messageId: uniqueName('m'), userId: 'u', event: 'E' });

/** Produces one event and waits until the receiver got it. */
async function deliversOne(config: SluiceConfig): Promise<void> {
  const { brokers, logger } = testServiceContext('reload-test', config);
  const kafka = testKafka({ brokers, clientId: 'reload-test', logger });
  await produceEvents(kafka, config.kafka.topics.events, [event()]);
  sent += 1;
  await receiver.waitFor(sent, 15_000);
}

before(async () => {
  receiver = await startReceiver();
  writeFileSync(path, JSON.stringify(rawConfig(['127.0.0.0/8'], prefix)));
  store = ConfigStore.fromFile(path);
  const ctx = { ...testServiceContext('deliverer', store.current), config: store };
  service = await createDeliverer(ctx, { port: 0 }).start();
  void service.fatal?.then(() => (threadDied = true));
});
after(async () => {
  await service.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a reload with a bad allow-list CIDR is refused; the running config and the webhook thread keep delivering', {
  timeout: 60_000,
}, async () => {
  const running = store.current;
  await deliversOne(running);

  const invalid: Error[] = [];
  store.on('invalid', (err) => invalid.push(err));
  writeFileSync(path, JSON.stringify(rawConfig(['127.0.0.0/8', '10.0.0.0/40'], prefix)));
  store.reload();
  assert.equal(invalid.length, 1);
  assert.match(invalid[0]!.message, /delivery\.ssrf\.allowCidrs\[1\]: not a CIDR/);
  assert.equal(store.current, running);
  await deliversOne(store.current);

  // Past validation (a config object set directly): the deliverer's reload step cannot build its
  // SSRF policy, so the swap is refused before anything changes.
  const unvalidated: SluiceConfig = {
    ...running,
    delivery: { ...running.delivery, ssrf: { ...running.delivery.ssrf, allowCidrs: ['10.0.0.0/40'] } },
  };
  assert.throws(() => store.set(unvalidated));
  assert.equal(store.current, running);
  await deliversOne(store.current);
  assert.equal(threadDied, false, 'the webhook thread is alive');
});
