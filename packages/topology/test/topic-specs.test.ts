import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '@sluice/config';
import { parkedTopicSpec, topicSpecs, waitingTopicName } from '../src/index.ts';

const destination = (extra: Record<string, unknown> = {}) => ({
  id: 'crm',
  type: 'webhooks',
  settings: { webhooks: [{ url: 'https://crm.example/hook' }] },
  ...extra,
});

describe('topicSpecs', () => {
  it("lists the pipeline's topics and a delay topic per tier, no destination's parked topic", () => {
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
    for (const compacted of [audienceState, destinationState, destinations]) {
      assert.deepEqual(configOf(compacted), [{ name: 'cleanup.policy', value: 'compact' }], compacted);
    }
    // A delay record outlives its wait with slack: at least a day, four waits for a long tier.
    assert.deepEqual(configOf('sluice.delay.10s'), [{ name: 'retention.ms', value: String(24 * 3_600_000) }]);
    assert.deepEqual(configOf('sluice.delay.480m'), [{ name: 'retention.ms', value: String(4 * 8 * 3_600_000) }]);
  });

  it('an ordered destination brings its waiting topic and the ordering state topic; none without one', () => {
    const plain = topicSpecs(parseConfig({ destinations: [destination()] })).map((s) => s.topic);
    assert.ok(!plain.includes('sluice.ordering'));
    const config = parseConfig({ destinations: [destination({ ordering: 'per-user' })] });
    const specs = topicSpecs(config);
    const state = specs.find((s) => s.topic === 'sluice.ordering');
    assert.deepEqual(state?.configEntries, [{ name: 'cleanup.policy', value: 'compact' }]);
    const waiting = specs.find((s) => s.topic === waitingTopicName(config, 'crm'));
    assert.equal(waiting?.topic, 'sluice.waiting.crm');
    assert.equal(waiting?.numPartitions, specs.find((s) => s.topic === 'sluice.events')?.numPartitions);
  });
});
