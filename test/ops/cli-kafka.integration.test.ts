// `sluice send` against a real in-process ingest, and `sluice topics` on the test broker.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { loadConfigFile } from '@sluice/config';
import { createIngest } from '@sluice/ingest';
import { createLogger } from '@sluice/logging';
import { jsonValues, prefixedTopics, readTopic, testBrokers, testServiceContext, testKafka } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';
import { memoryIo } from './cli-io.ts';
import { writeUniqueConfig } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-kafka-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, KAFKA_BROKERS: testBrokers().join(',') };
const kafka = testKafka({ clientId: 'cli-test', logger: createLogger({ name: 'cli-test', level: 'error' }) });

test('send: one track call reaches sluice.events through real ingest; a wrong key exits 1', {
  timeout: 60_000,
}, async () => {
  const { path } = writeUniqueConfig(dir);
  const config = loadConfigFile(path);
  const ingest = await createIngest(testServiceContext('ingest', config), { port: 0 }).start();
  try {
    const endpoint = `http://127.0.0.1:${ingest.port}`;
    const writeKey = config.sources[0]!.writeKeys[0]!;
    const ok = memoryIo('', { ...env, SLUICE_WRITE_KEY: writeKey });
    const args = ['--event', 'CLI Check', '--user-id', 'u-cli', '--properties', '{"n":7}'];
    const code = await runCli(['send', '--endpoint', endpoint, '--write-key-env', 'SLUICE_WRITE_KEY', ...args], ok.io);
    assert.equal(code, 0, ok.stderr());
    assert.match(ok.stdout(), /^sent track to http:\/\/127\.0\.0\.1:\d+\/v1\/track: 200 /);

    const [event] = jsonValues<Record<string, unknown>>(
      await readTopic(kafka, config.kafka.topics.events, { count: 1, timeoutMs: 20_000 }),
    );
    assert.equal(event?.type, 'track');
    assert.equal(event?.event, 'CLI Check');
    assert.equal(event?.userId, 'u-cli');
    assert.deepEqual(event?.properties, { n: 7 });
    assert.equal(event?.sourceId, 'demo');

    const denied = memoryIo('', env);
    assert.equal(await runCli(['send', '--endpoint', endpoint, '--write-key', 'nope'], denied.io), 1);
    assert.match(denied.stderr(), /not accepted: 401 /);
  } finally {
    await ingest.close();
  }
});

test('send: an unreachable endpoint exits 1 naming the URL', async () => {
  const { io, stderr } = memoryIo('', env);
  assert.equal(await runCli(['send', '--endpoint', 'http://127.0.0.1:1', '--write-key', 'k'], io), 1);
  assert.match(stderr(), /cannot reach http:\/\/127\.0\.0\.1:1\/v1\/track/);
});

test('topics: describes missing topics, --create creates them with the configured partitions', {
  timeout: 60_000,
}, async () => {
  const { path, prefix } = writeUniqueConfig(dir, { retry: { tiers: ['1s', '5s'] } });
  const specs = topicSpecs(loadConfigFile(path));
  const wanted = specs.map((s) => s.topic);
  const partitionsOf = new Map(specs.map((s) => [s.topic, s.numPartitions]));
  assert.ok(wanted.includes(`${prefix}.delay.1s`) && wanted.includes(`${prefix}.events`));

  const before = memoryIo('', env);
  assert.equal(await runCli(['topics', '--config', path], before.io), 0, before.stderr());
  assert.equal(
    before
      .stdout()
      .split('\n')
      .filter((l) => /missing \(would be \d+ partitions\)/.test(l)).length,
    wanted.length,
  );

  const create = memoryIo('', env);
  assert.equal(await runCli(['topics', '--config', path, '--create', '--json'], create.io), 0, create.stderr());
  const rows = JSON.parse(create.stdout()) as {
    topic: string;
    exists: boolean;
    partitions: number;
    config: Record<string, string>;
  }[];
  assert.deepEqual(
    rows.map((r) => r.topic),
    wanted,
  );
  // Every topic with the partitions its spec names (the configured 2; sluice.destinations has 1).
  for (const row of rows)
    assert.deepEqual([row.topic, row.exists, row.partitions], [row.topic, true, partitionsOf.get(row.topic)]);
  const stateTopic = prefixedTopics(prefix).audienceState;
  assert.equal(rows.find((r) => r.topic === stateTopic)?.config['cleanup.policy'], 'compact');

  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    assert.deepEqual(
      wanted.filter((t) => !existing.has(t)),
      [],
    );
  } finally {
    await admin.disconnect();
  }

  const again = memoryIo('', env);
  assert.equal(await runCli(['topics', '--config', path, '--create'], again.io), 0);
  assert.match(again.stdout(), /^all topics already exist\n/);
});

test('topics: without KAFKA_BROKERS it exits 1 naming the variable', async () => {
  const { KAFKA_BROKERS: _omit, ...rest } = process.env;
  const { path } = writeUniqueConfig(dir);
  const { io, stderr } = memoryIo('', rest);
  assert.equal(await runCli(['topics', '--config', path], io), 1);
  assert.match(stderr(), /KAFKA_BROKERS/);
});
