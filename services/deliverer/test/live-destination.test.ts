import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RETRY_HEADERS } from '@sluice/envelope';
import { testConfig } from '@sluice/testkit';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import {
  liveDestinationOrDeadLetter,
  lookUpDestination,
  whyDestinationCannotSend,
} from '../src/intake/live-destination.ts';
import { deliveryRig } from './delivery-rig.ts';

const config = testConfig({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: [
    { id: 'on', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: 'https://hooks.example/a' }] } },
    {
      id: 'off',
      type: 'webhooks',
      enabled: false,
      sourceIds: ['s'],
      settings: { webhooks: [{ url: 'https://hooks.example/b' }] },
    },
  ],
});

const jobFor = (destinationId: string, endpoints: string[] = []): DeliveryJob => ({
  key: 's:u',
  body: Buffer.from('{}'),
  messageId: 'm1',
  sourceId: 's',
  destinationId,
  eventType: 'track',
  endpoints,
});

describe('the intake decision: why a destination cannot send (whyDestinationCannotSend)', () => {
  const why = (destinationId: string) => whyDestinationCannotSend(lookUpDestination(config, destinationId));

  it('gone from the config in force (deleted at runtime, or removed from the file): destination_deleted', () => {
    assert.deepEqual(why('removed'), { reason: 'destination_deleted', lastError: 'destination removed is gone' });
  });

  it('there but disabled: no_endpoints', () => {
    assert.deepEqual(why('off'), { reason: 'no_endpoints', lastError: 'destination off is disabled' });
  });

  it('there and enabled: it may send', () => {
    assert.equal(why('on'), undefined);
  });
});

describe('the intake decision (liveDestinationOrDeadLetter)', () => {
  const decide = async (destinationId: string) => {
    const dead: string[] = [];
    const destination = await liveDestinationOrDeadLetter(
      {
        config: () => config,
        deadLetter: async (job, { reason, lastError }) => void dead.push(`${job.messageId} ${reason}: ${lastError}`),
      },
      jobFor(destinationId),
    );
    return { destination: destination?.id, dead };
  };

  it('an enabled destination sends, nothing dead-lettered', async () => {
    assert.deepEqual(await decide('on'), { destination: 'on', dead: [] });
  });

  it('a disabled destination: the event is dead-lettered no_endpoints, saying so', async () => {
    assert.deepEqual(await decide('off'), {
      destination: undefined,
      dead: ['m1 no_endpoints: destination off is disabled'],
    });
  });

  it('a destination no longer in the config in force: dead-lettered destination_deleted, saying it is gone', async () => {
    assert.deepEqual(await decide('removed'), {
      destination: undefined,
      dead: ['m1 destination_deleted: destination removed is gone'],
    });
  });

  it('an endpoint removed from a destination that still exists: the intake lets it through, the delivery dead-letters it no_endpoints', async () => {
    const job = jobFor('on', ['https://hooks.example/removed']);
    assert.equal((await decide('on')).destination, 'on');
    const rig = deliveryRig(config, { connections: 1 });
    try {
      const destination = (await liveDestinationOrDeadLetter(
        { config: () => config, deadLetter: async () => {} },
        job,
      ))!;
      assert.deepEqual(await rig.delivery.run(job, destination), { kind: 'dead', reason: 'no_endpoints' });
    } finally {
      await rig.close();
    }
    const dead = rig.sent.filter((s) => s.topic === config.kafka.topics.deadLetter);
    assert.equal(dead.length, 1, 'one dead letter, no request');
    const headers = dead[0]!.message.headers as Record<string, string>;
    assert.equal(headers[RETRY_HEADERS.deadReason], 'no_endpoints');
    assert.equal(headers[RETRY_HEADERS.lastError], 'no endpoint of on left to deliver to');
  });
});
