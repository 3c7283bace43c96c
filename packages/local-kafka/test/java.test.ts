import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startLocalKafka } from '../src/index.ts';

test('the broker runs the Java that SLUICE_JAVA names, and says so when it cannot', async () => {
  const saved = process.env.SLUICE_JAVA;
  process.env.SLUICE_JAVA = '/nonexistent/sluice-java';
  try {
    await assert.rejects(
      startLocalKafka({ log: () => {} }),
      (err: Error) =>
        err.message.startsWith(
          "Apache Kafka needs Java 17 or later, but '/nonexistent/sluice-java' could not be run",
        ) && err.message.includes('or set KAFKA_BROKERS'),
    );
  } finally {
    if (saved === undefined) delete process.env.SLUICE_JAVA;
    else process.env.SLUICE_JAVA = saved;
  }
});
