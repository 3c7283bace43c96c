// The two test tiers (docs/CONVENTIONS.md, "Tests"): every test file that needs a broker, a
// schema registry, PostgreSQL or a browser says so in its name, and `npm run test:unit` runs all
// the others with none of them, failing clearly (not hanging) on a file that breaks the rule.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './code-facts.ts';

function listed(fn: 'all_test_files' | 'unit_test_files'): string[] {
  const run = spawnSync('bash', ['-c', `source scripts/lib/test-files.sh && ${fn}`], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split('\n').filter((f) => f !== '');
}

/** What only a broker-tier file may use: the local Kafka, registry and PostgreSQL, a browser, the test broker. */
const BROKER_TIER_USES: [RegExp, string][] = [
  [/from '@sluice\/local-(kafka|schema-registry|postgres)'/, 'starts a local Kafka, schema registry or PostgreSQL'],
  [/from 'playwright(-core)?'/, 'drives a browser'],
  [/\b(testBrokers|testKafka|testServiceContext)\(/, 'uses the test broker'],
];

test('the unit tier is every test file but those named *.integration.test.ts, *.e2e.test.ts or under test/drills', () => {
  const all = listed('all_test_files');
  const unit = listed('unit_test_files');
  const brokerTier = all.filter((f) => !unit.includes(f));
  assert.ok(unit.length > 50 && brokerTier.length > 40, `${unit.length} unit files, ${brokerTier.length} others`);
  for (const f of brokerTier) assert.match(f, /\.(integration|e2e)\.test\.ts$|^test\/(e2e|drills)\//, f);
  for (const f of unit) assert.doesNotMatch(f, /\.(integration|e2e)\.test\.ts$|^test\/(e2e|drills)\//, f);
});

test('no unit-tier file starts a broker, a registry, a database or a browser, or uses the test broker', () => {
  const offenders: string[] = [];
  for (const file of listed('unit_test_files')) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [pattern, what] of BROKER_TIER_USES)
      if (pattern.test(text)) offenders.push(`${file} ${what}: name it *.integration.test.ts`);
  }
  assert.deepEqual(offenders, []);
});

test('npm run test:unit fails at once, naming the rule, on a file that needs a broker (no hang)', () => {
  // Not run as a child of this runner (NODE_TEST_CONTEXT), and with a broker named: the script drops it.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const started = Date.now();
  const run = spawnSync('bash', ['scripts/test-unit.sh', 'test/ops/fixtures/needs-broker.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...env, KAFKA_BROKERS: '127.0.0.1:9', TEST_REPORTER: 'spec' },
    timeout: 60_000,
  });
  assert.notEqual(run.status, 0, run.stdout);
  assert.equal(run.signal, null, 'the run ended by itself');
  assert.match(run.stdout, /needs a Kafka broker, and `npm run test:unit` runs without one/);
  assert.match(run.stdout, /\*\.integration\.test\.ts/);
  assert.ok(Date.now() - started < 60_000);
});
