import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ensureTopics, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testConfig, testKafka } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';

const logger = createLogger({ name: 'topology-test', level: 'warn' });
let kafka: Kafka;

before(() => {
  kafka = testKafka({ clientId: 'topology-test', logger });
});

describe('the topics of a config on a real broker', () => {
  it('creates every topic of a config once; a second run creates nothing', async () => {
    const config = testConfig({ retry: { tiers: ['1s', '2s'] } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const created = await ensureTopics(admin, topicSpecs(config));
      // events, rejected, retry, redeliver, dead-letter, attempts, audiences, audience-state,
      // destination-state, destination-actions, destinations, ordering, two delay tiers (no
      // destination's parked or waiting topic: the deliverer creates those).
      assert.equal(created.length, 14);
      assert.deepEqual(await ensureTopics(admin, topicSpecs(config)), []);
      const meta = await admin.fetchTopicMetadata({ topics: [config.kafka.topics.events] });
      assert.equal(meta.topics[0]?.partitions.length, 2);
      const catalog = await admin.fetchTopicMetadata({ topics: [config.kafka.topics.destinations] });
      assert.equal(catalog.topics[0]?.partitions.length, 1);
      const { audienceState, destinationState, destinations } = config.kafka.topics;
      const compacted = [audienceState, destinationState, destinations];
      const described = await admin.describeConfigs({
        resources: compacted.map((name) => ({ type: 2, name, configNames: ['cleanup.policy'] })),
        includeSynonyms: false,
      });
      for (const r of described.resources) assert.equal(r.configEntries[0]?.configValue, 'compact', r.resourceName);
      assert.ok((await admin.listTopics()).includes(`${config.kafka.topics.delayPrefix}2s`));
    } finally {
      await admin.disconnect();
    }
  });
});
