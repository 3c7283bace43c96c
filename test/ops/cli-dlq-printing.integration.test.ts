// `sluice dlq list` prints what it read from Kafka without letting it act on the terminal or show
// an endpoint's credentials: control characters escaped, URLs redacted (text and --json).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfigFile } from '@sluice/config';
import { retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testBrokers, uniqueName, testKafka, createTestTopics } from '@sluice/testkit';
import { configuredCli } from './cli-io.ts';
import { writeUniqueConfig } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-print-'));
const env = { ...process.env, KAFKA_BROKERS: testBrokers().join(',') };
const kafka = testKafka({
  clientId: 'cli-print-test',
  logger: createLogger({ name: 'cli-print-test', level: 'error' }),
});
let configPath: string;
const SECRET_URL = 'https://hookuser:hookpass@hooks.example/in?token=tok3n';
const hostileId = `m-${uniqueName('x')}\u001b[2J\u001b]0;owned\u0007\r\nX-Evil: 1\u009b31m`;

before(async () => {
  ({ path: configPath } = writeUniqueConfig(dir));
  const config = loadConfigFile(configPath);
  await createTestTopics(kafka, config);
  const state: RetryState = {
    messageId: hostileId,
    sourceId: 'src\u001b[31m',
    destinationId: 'dest-a',
    eventType: 'track',
    endpoints: [SECRET_URL],
    firstAttemptAt: 0,
    attempts: 3,
    history: [{ attempt: 3, endpoint: SECRET_URL, at: 1, outcome: 'retryable', status: 503, latencyMs: 2 }],
    deadReason: 'window_exhausted',
    deadAt: 2,
    lastError: `${SECRET_URL}: http_503`,
  };
  const producer = new SafeProducer(kafka);
  await producer.connect();
  await producer.send(config.kafka.topics.deadLetter, [{ key: 'k', value: '{}', headers: retryStateToHeaders(state) }]);
  await producer.disconnect();
});
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = configuredCli(env, () => configPath);

test('dlq list escapes control characters and redacts endpoint URLs, in text and in --json', {
  timeout: 60_000,
}, async () => {
  for (const args of [
    ['dlq', 'list'],
    ['dlq', 'list', '--json'],
  ]) {
    const out = await cli(...args);
    assert.equal(out.code, 0, out.stderr);
    assert.doesNotMatch(
      out.stdout,
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw control character may be printed.
      /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/,
      `${args.join(' ')}: raw control character`,
    );
    assert.equal(out.stdout.trim().split('\n').length, 1, 'one line per dead letter');
    assert.doesNotMatch(out.stdout, /hookpass|hookuser|tok3n/, `${args.join(' ')}: credentials`);
    assert.match(out.stdout, /hooks\.example/);
  }
  const text = await cli('dlq', 'list');
  assert.match(text.stdout, /messageId=m-\S+\\x1b\[2J\\x1b\]0;owned\\x07\\x0d\\x0aX-Evil: 1\\x9b31m/);
  const row = JSON.parse((await cli('dlq', 'list', '--json')).stdout) as {
    messageId: string;
    endpoints: string[];
    lastError: string;
  };
  assert.equal(row.messageId, hostileId);
  assert.deepEqual(row.endpoints, ['https://***@hooks.example/in?***']);
  assert.equal(row.lastError, 'https://***@hooks.example/in?***: http_503');
});
