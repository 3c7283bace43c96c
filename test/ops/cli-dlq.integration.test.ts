// `sluice dlq list` and `sluice dlq replay` against dead letters on a fresh dead-letter topic.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { loadConfigFile, type SluiceConfig } from '@sluice/config';
import { retryStateFromHeaders, retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { readTopic, testBrokers, testDeadLetter, testKafka, createTestTopics } from '@sluice/testkit';
import { configuredCli, memoryIo } from './cli-io.ts';
import { writeUniqueConfig } from './fixtures.ts';

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-dlq-'));
const env = { ...process.env, KAFKA_BROKERS: testBrokers().join(',') };
const kafka = testKafka({ clientId: 'cli-dlq-test', logger: createLogger({ name: 'cli-dlq-test', level: 'error' }) });
let configPath: string;
let config: SluiceConfig;

const dead = (over: Partial<RetryState> = {}) => testDeadLetter(over, T0);

const letters = [
  dead({ destinationId: 'dest-a', sourceId: 'src-a' }),
  dead({
    destinationId: 'dest-b',
    sourceId: 'src-a',
    deadReason: 'permanent_failure',
    deadAt: T0 + 1_000,
    lastError: 'http_410',
  }),
  dead({ destinationId: 'dest-a', sourceId: 'src-b', deadAt: T0 + 86_400_000 }),
];

before(async () => {
  ({ path: configPath } = writeUniqueConfig(dir));
  config = loadConfigFile(configPath);
  await createTestTopics(kafka, config);
  const producer = new SafeProducer(kafka);
  await producer.connect();
  await producer.send(
    config.kafka.topics.deadLetter,
    letters.map((s) => ({
      key: `${s.sourceId}:u`,
      value: JSON.stringify({ type: s.eventType, messageId: s.messageId }),
      headers: retryStateToHeaders(s),
    })),
  );
  await producer.disconnect();
});
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = configuredCli(env, () => configPath);

/** The CLI with stderr on a terminal that answers every confirmation with `answer`. */
const onTerminal = async (answer: boolean, ...args: string[]) => {
  const io = memoryIo('', env, { answer });
  const code = await runCli([...args, '--config', configPath], io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr(), questions: io.questions };
};

test('dlq list: all, and each filter (destination, source, reason, since/until)', { timeout: 60_000 }, async () => {
  const all = await cli('dlq', 'list');
  assert.equal(all.code, 0, all.stderr);
  for (const l of letters) assert.match(all.stdout, new RegExp(`messageId=${l.messageId}`));
  assert.match(all.stderr, /^3 dead letters/);

  const ids = async (...filter: string[]) => {
    const r = await cli('dlq', 'list', '--json', ...filter);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { messageId: string }).messageId)
      .sort();
  };
  const id = (i: number) => letters[i]!.messageId;
  assert.deepEqual(await ids('--destination', 'dest-a'), [id(0), id(2)].sort());
  assert.deepEqual(await ids('--source', 'src-b'), [id(2)]);
  assert.deepEqual(await ids('--reason', 'permanent_failure'), [id(1)]);
  assert.deepEqual(await ids('--since', new Date(T0 + 86_400_000).toISOString()), [id(2)]);
  assert.deepEqual(await ids('--until', new Date(T0 + 14_400_000).toISOString()), [id(1)]);
  assert.deepEqual(await ids('--destination', 'dest-a', '--source', 'src-a'), [id(0)]);

  const json = await cli('dlq', 'list', '--json', '--reason', 'permanent_failure');
  const row = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.equal(row.lastError, 'http_410');
  assert.equal(row.body, JSON.stringify({ type: 'track', messageId: id(1) }));

  const bad = await cli('dlq', 'list', '--reason', 'nope');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--reason: must be one of/);
  const badTime = await cli('dlq', 'list', '--since', 'yesterday-ish');
  assert.equal(badTime.code, 1);
  assert.match(badTime.stderr, /--since: not a time/);
});

test('dlq list: --limit stops after that many; --json is one object per line; no progress line off a terminal', {
  timeout: 60_000,
}, async () => {
  const limited = await cli('dlq', 'list', '--json', '--limit', '2');
  assert.equal(limited.code, 0, limited.stderr);
  const rows = limited.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { messageId: string; partition: number });
  assert.equal(rows.length, 2);
  for (const row of rows) assert.ok(letters.some((l) => l.messageId === row.messageId));
  assert.equal(limited.stderr, '', 'stderr is not a terminal: no progress line, and --json prints no count');

  const text = await cli('dlq', 'list', '--limit', '1');
  assert.equal(text.stdout.split('\n').filter(Boolean).length, 1);
  assert.equal(text.stderr, '1 dead letters (--limit 1 reached)\n');
  assert.doesNotMatch(text.stderr, /\r|reading/);

  const bad = await cli('dlq', 'list', '--limit', '0');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--limit.*positive integer/);
});

test('dlq list on a terminal: a progress line on stderr, erased before each dead letter and at the end', {
  timeout: 60_000,
}, async () => {
  const run = await onTerminal(false, 'dlq', 'list');
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.split('\n').filter(Boolean).length, 3);
  assert.match(run.stderr, /\rreading (replay markers|dead letters): \d+ of \d+ records \(\d+%\)/);
  assert.ok(run.stderr.endsWith('\r\x1b[K3 dead letters\n'), JSON.stringify(run.stderr.slice(-80)));
});

test('dlq replay: without a filter or --all it refuses; --all with a filter is refused too', async () => {
  const bare = await cli('dlq', 'replay');
  assert.equal(bare.code, 1);
  assert.match(bare.stderr, /give a filter \(--destination, --source, --reason, --since, --until\) or --all/);
  assert.equal(bare.stdout, '');
  const both = await cli('dlq', 'replay', '--all', '--reason', 'window_exhausted');
  assert.equal(both.code, 1);
  assert.match(both.stderr, /--all replays every dead letter/);
});

test('dlq replay: plan first; --dry-run and a declined confirmation write nothing; a replay re-injects with a fresh window, once', {
  timeout: 90_000,
}, async () => {
  const dry = await cli('dlq', 'replay', '--destination', 'dest-a', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  const lines = dry.stdout.split('\n');
  assert.equal(lines[0], 'replay plan: 2 dead letters to replay (2 match destination=dest-a)');
  assert.equal(lines[1], '  by destination: dest-a 2');
  assert.equal(lines[2], '  by reason: window_exhausted 2');
  assert.equal(
    lines[3],
    `  died between ${new Date(T0 + 14_400_000).toISOString()} and ${new Date(T0 + 86_400_000).toISOString()}`,
  );
  assert.equal(lines.filter((l) => l.startsWith('would replay  ')).length, 2);
  assert.match(dry.stdout, /dry run: 2 of 2 matching dead letters would be replayed/);

  const declined = await onTerminal(false, 'dlq', 'replay', '--destination', 'dest-a');
  assert.equal(declined.code, 1);
  assert.deepEqual(declined.questions, [`Replay 2 dead letters onto ${config.kafka.topics.redeliver}?`]);
  assert.match(declined.stdout, /^replay plan: 2 dead letters to replay/);
  assert.match(declined.stderr, /replay cancelled: nothing replayed/);
  assert.equal(
    (await readTopic(kafka, config.kafka.topics.redeliver, { count: 1, timeoutMs: 2_500 })).length,
    0,
    'nothing written',
  );

  const before = Date.now();
  const replay = await cli('dlq', 'replay', '--destination', 'dest-a');
  assert.equal(replay.code, 0, replay.stderr);
  assert.match(replay.stdout, /replayed 2 of 2 matching dead letters/);
  const records = await readTopic(kafka, config.kafka.topics.redeliver, { count: 2, timeoutMs: 15_000, settleMs: 500 });
  assert.equal(records.length, 2);
  const states = records.map((r) => retryStateFromHeaders(r.headers));
  assert.deepEqual(states.map((s) => s.messageId).sort(), [letters[0]!.messageId, letters[2]!.messageId].sort());
  for (const s of states) {
    assert.ok(s.firstAttemptAt >= before, 'fresh window from the replay');
    assert.equal(s.deadReason, undefined);
  }

  const again = await cli('dlq', 'replay', '--destination', 'dest-a');
  assert.match(
    again.stdout,
    /^replay plan: 0 dead letters to replay \(2 match destination=dest-a; 2 already replayed, skipped\)\n/,
  );
  assert.match(again.stdout, /replayed 0 of 2 matching dead letters, 2 skipped \(already replayed\)/);
});

test('dlq replay on a terminal: --yes does not ask; --all plans over every dead letter', {
  timeout: 90_000,
}, async () => {
  const yes = await onTerminal(false, 'dlq', 'replay', '--source', 'src-a', '--destination', 'dest-b', '--yes');
  assert.equal(yes.code, 0, yes.stderr);
  assert.deepEqual(yes.questions, [], '--yes: no question');
  assert.match(yes.stdout, /replayed 1 of 1 matching dead letters/);
  const all = await onTerminal(true, 'dlq', 'replay', '--all');
  assert.equal(all.code, 0, all.stderr);
  assert.match(
    all.stdout,
    /^replay plan: 0 dead letters to replay \(3 match every dead letter; 3 already replayed, skipped\)/,
  );
  assert.deepEqual(all.questions, [], 'nothing to replay: nothing to ask');
});
