import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testConfig } from '@sluice/testkit';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { liveDestinationOrDeadLetter } from '../src/intake/live-destination.ts';

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

const jobFor = (destinationId: string): DeliveryJob => ({
  key: 's:u',
  body: Buffer.from('{}'),
  messageId: 'm1',
  sourceId: 's',
  destinationId,
  eventType: 'track',
  endpoints: [],
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

  it('a destination no longer in the config: dead-lettered no_endpoints, saying it is gone', async () => {
    assert.deepEqual(await decide('removed'), {
      destination: undefined,
      dead: ['m1 no_endpoints: destination removed is gone'],
    });
  });
});
