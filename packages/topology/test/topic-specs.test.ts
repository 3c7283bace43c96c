import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '@sluice/config';
import { isWaitingTopic, parkedTopicSpec, topicSpecs, waitingTopicName, waitingTopicSpec } from '../src/index.ts';

const destination = (extra: Record<string, unknown> = {}) => ({
  id: 'crm',
  type: 'webhooks',
  settings: { webhooks: [{ url: 'https://crm.example/hook' }] },
  ...extra,
});

describe('topicSpecs', () => {
  it("lists the pipeline's topics and a delay topic per tier, no destination's parked or waiting topic", () => {
    const config = parseConfig({
      kafka: { partitions: 3, replicationFactor: 2 },
      retry: { tiers: ['10s', '8h'] },
      destinations: [destination()],
    });
    const specs = topicSpecs(config);
    assert.deepEqual(
      specs.map((s) => s.topic),
      [
        config.kafka.topics.events,
        config.kafka.topics.rejected,
        config.kafka.topics.retry,
        config.kafka.topics.redeliver,
        config.kafka.topics.deadLetter,
        config.kafka.topics.attempts,
        config.kafka.topics.audiences,
        config.kafka.topics.audienceState,
        config.kafka.topics.destinationState,
        config.kafka.topics.destinationActions,
        config.kafka.topics.destinations,
        config.kafka.topics.ordering,
        'sluice.delay.10s',
        'sluice.delay.480m',
      ],
    );
    for (const s of specs) {
      assert.equal(s.numPartitions, s.topic === 'sluice.destinations' ? 1 : 3, s.topic);
      assert.equal(s.replicationFactor, 2, s.topic);
    }
    const configOf = (topic: string) => specs.find((s) => s.topic === topic)?.configEntries;
    assert.deepEqual(configOf(config.kafka.topics.events), undefined);
    assert.deepEqual(configOf(config.kafka.topics.deadLetter), [{ name: 'retention.ms', value: '-1' }]);
    assert.deepEqual(parkedTopicSpec(config, 'crm'), {
      topic: 'sluice.parked.crm',
      numPartitions: 3,
      replicationFactor: 2,
      configEntries: [{ name: 'retention.ms', value: '-1' }],
    });
    const { audienceState, destinationState, destinations } = config.kafka.topics;
    for (const compacted of [audienceState, destinationState, destinations, config.kafka.topics.ordering]) {
      assert.deepEqual(configOf(compacted), [{ name: 'cleanup.policy', value: 'compact' }], compacted);
    }
    // A delay record outlives its wait with slack: at least a day, four waits for a long tier.
    assert.deepEqual(configOf('sluice.delay.10s'), [{ name: 'retention.ms', value: String(24 * 3_600_000) }]);
    assert.deepEqual(configOf('sluice.delay.480m'), [{ name: 'retention.ms', value: String(4 * 8 * 3_600_000) }]);
  });

  it("an ordered destination brings no topic into the pipeline's list: its waiting topic is the deliverer's to create, partitioned like the events", () => {
    const plain = topicSpecs(parseConfig({ destinations: [destination()] })).map((s) => s.topic);
    const config = parseConfig({ destinations: [destination({ ordering: 'per-user' })] });
    const specs = topicSpecs(config);
    assert.deepEqual(
      specs.map((s) => s.topic),
      plain,
    );
    assert.deepEqual(waitingTopicSpec(config, 'crm'), {
      topic: 'sluice.waiting.crm',
      numPartitions: specs.find((s) => s.topic === 'sluice.events')?.numPartitions,
      replicationFactor: config.kafka.replicationFactor,
      configEntries: [{ name: 'retention.ms', value: '-1' }],
    });
    assert.equal(waitingTopicName(config, 'crm'), 'sluice.waiting.crm');
    assert.ok(isWaitingTopic(config, 'sluice.waiting.crm'));
    assert.ok(!isWaitingTopic(config, 'sluice.parked.crm'));
  });
});
