import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testConfig } from '@sluice/testkit';
import { endpointOrigins } from '../src/service/config.ts';

const destination = (id: string, urls: string[]) => ({
  id,
  type: 'webhooks',
  settings: { webhooks: urls.map((url) => ({ url })) },
});

describe('endpointOrigins', () => {
  it('the origins of every endpoint, each once; a destination kept across configs is not parsed again, a replaced one is', () => {
    const config = testConfig({
      destinations: [
        destination('a', ['https://a.example/h1', 'https://a.example:8443/h2']),
        destination('b', ['https://b.example/h', 'https://a.example/other']),
      ],
    });
    assert.deepEqual([...endpointOrigins(config)].sort(), [
      'https://a.example',
      'https://a.example:8443',
      'https://b.example',
    ]);
    // The same destination objects in a later config (a change elsewhere): the same answer.
    const b = config.destinations[1]!;
    assert.deepEqual([...endpointOrigins({ ...config, destinations: [b] })].sort(), [
      'https://a.example',
      'https://b.example',
    ]);
    const replaced = testConfig({ destinations: [destination('a', ['https://c.example/h'])] }).destinations[0]!;
    assert.deepEqual([...endpointOrigins({ ...config, destinations: [replaced, b] })].sort(), [
      'https://a.example',
      'https://b.example',
      'https://c.example',
    ]);
  });
});
