// A deliverer whose consumer cannot start must leave nothing behind: its producer thread, webhook
// thread, consumer and Kafka clients all end, so the failed process exits instead of idling.
import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { ConcurrentConsumer, createKafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { brokerSockets, testBrokers, testConfig, testServiceContext, workerThreads } from '@sluice/testkit';
import { createDeliverer } from '../src/index.ts';
import { delivererGroupId } from '../src/service/config.ts';

const config = () =>
  testConfig({
    sources: [{ id: 'web', writeKeys: ['wk'] }],
    destinations: [
      { id: 'hook', type: 'webhooks', sourceIds: ['web'], settings: { webhookUrl: 'http://127.0.0.1:9/hook' } },
    ],
  });

async function groupMembers(groupId: string): Promise<number> {
  const kafka = createKafka({
    brokers: testBrokers(),
    clientId: 'start-failure-check',
    logger: createLogger({ name: 'check', level: 'silent' }),
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return groups[0]!.members.length;
  } finally {
    await admin.disconnect();
  }
}

/** Starts a deliverer whose consumer's start is `start`, and checks that the failed start left nothing open. */
async function failedStartLeavesNothing(start: (this: ConcurrentConsumer) => Promise<void>): Promise<void> {
  const before = { threads: workerThreads(), sockets: brokerSockets() };
  const cfg = config();
  mock.method(ConcurrentConsumer.prototype, 'start', start);
  const failed = createDeliverer(testServiceContext('deliverer', cfg), { port: 0 }).start();
  await assert.rejects(failed, /consumer start failed \(injected\)/);
  mock.restoreAll();
  assert.equal(workerThreads(), before.threads, 'the producer thread and the webhook thread have ended');
  assert.equal(brokerSockets(), before.sockets, 'no connection to the broker is left open');
  // A consumer left behind would stay a member of its group until its session expired.
  assert.equal(await groupMembers(delivererGroupId(cfg)), 0);
}

describe('deliverer: consumer.start() throws', () => {
  afterEach(() => mock.restoreAll());
  const realStart = ConcurrentConsumer.prototype.start;

  it('after it joined its group: the consumer leaves, every thread and client is closed', () =>
    failedStartLeavesNothing(async function (this: ConcurrentConsumer) {
      await realStart.call(this);
      throw new Error('consumer start failed (injected)');
    }));

  it('before it connected: every thread and client is closed', () =>
    failedStartLeavesNothing(async () => {
      throw new Error('consumer start failed (injected)');
    }));
});
