import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';

// When `npm test` provisioned the broker, it says which JVM it started; prove it is Apache Kafka.
it('the broker under test is a real Apache Kafka JVM started by the harness (or KAFKA_BROKERS)', (t) => {
  const pid = process.env.SLUICE_LOCAL_KAFKA_PID;
  if (!pid) {
    assert.ok(process.env.KAFKA_BROKERS, 'either the harness provisions a broker or KAFKA_BROKERS names one');
    t.diagnostic(`using the cluster at KAFKA_BROKERS=${process.env.KAFKA_BROKERS}; nothing provisioned`);
    return;
  }
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  assert.ok(cmdline[0]?.endsWith('java'), cmdline.join(' '));
  assert.ok(cmdline.includes('kafka.Kafka'), 'main class kafka.Kafka');
  assert.ok(
    cmdline.some((a) => a.includes('kafka_2.13-3.9.1.jar') || a.includes('/libs/')),
    'classpath from the cache',
  );
  t.diagnostic(`Apache Kafka JVM pid ${pid}`);
});
