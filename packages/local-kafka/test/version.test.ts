import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKafka4, KAFKA_VERSION, kafkaVersionFromEnv, SUPPORTED_KAFKA_VERSIONS } from '../src/index.ts';

test('SLUICE_KAFKA_VERSION picks one of the supported versions; unset means the default, 4.1.1', () => {
  assert.deepEqual([...SUPPORTED_KAFKA_VERSIONS], ['3.9.1', '4.1.1']);
  assert.equal(KAFKA_VERSION, '4.1.1');
  assert.equal(kafkaVersionFromEnv({}), KAFKA_VERSION);
  assert.equal(kafkaVersionFromEnv({ SLUICE_KAFKA_VERSION: '' }), KAFKA_VERSION);
  assert.equal(kafkaVersionFromEnv({ SLUICE_KAFKA_VERSION: '3.9.1' }), '3.9.1');
  assert.equal(kafkaVersionFromEnv({ SLUICE_KAFKA_VERSION: '4.1.1' }), '4.1.1');
  assert.throws(
    () => kafkaVersionFromEnv({ SLUICE_KAFKA_VERSION: '4.0.0' }),
    /SLUICE_KAFKA_VERSION=4\.0\.0 is not one of 3\.9\.1, 4\.1\.1/,
  );
  assert.equal(isKafka4('4.1.1'), true);
  assert.equal(isKafka4('3.9.1'), false);
});
