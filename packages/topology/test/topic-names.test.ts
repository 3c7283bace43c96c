import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '@sluice/config';
import { delayTopicName, parkedTopicName, waitingTopicName } from '../src/index.ts';

describe('topic names', () => {
  const config = parseConfig({});

  it('names a delay tier by its duration (docs/reference/retries.md)', () => {
    assert.equal(delayTopicName(config, 10_000), 'sluice.delay.10s');
    assert.equal(delayTopicName(config, 3_600_000), 'sluice.delay.60m');
    assert.equal(delayTopicName(config, 1_500), 'sluice.delay.1500ms');
  });

  it("names a destination's parked and waiting topics by its id", () => {
    assert.equal(parkedTopicName(config, 'crm'), 'sluice.parked.crm');
    assert.equal(waitingTopicName(config, 'crm'), 'sluice.waiting.crm');
  });

  it("follows the config's prefixes", () => {
    const custom = parseConfig({
      kafka: { topics: { delayPrefix: 'acme.delay.', parkedPrefix: 'acme.parked.', waitingPrefix: 'acme.waiting.' } },
    });
    assert.equal(delayTopicName(custom, 10_000), 'acme.delay.10s');
    assert.equal(parkedTopicName(custom, 'crm'), 'acme.parked.crm');
    assert.equal(waitingTopicName(custom, 'crm'), 'acme.waiting.crm');
  });
});
