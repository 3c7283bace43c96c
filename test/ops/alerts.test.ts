// The alert rules' behaviour: `promtool test rules` runs deploy/prometheus/alerts.test.yml, which has
// a firing and a silent case for every alert (this test checks that too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from './code-facts.ts';
import { ensurePromtool } from './ops-tools.ts';

const PROMETHEUS = join(ROOT, 'deploy/prometheus');

interface RuleTests {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

test('every alert in alerts.yml has a unit test where it fires and one where it stays silent', () => {
  const rules = parse(readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8')) as {
    groups: { rules: { alert: string }[] }[];
  };
  const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
  const unit = parse(readFileSync(join(PROMETHEUS, 'alerts.test.yml'), 'utf8')) as RuleTests;
  const checks = unit.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const alert of alerts) {
    const mine = checks.filter((c) => c.alertname === alert);
    assert.ok(
      mine.some((c) => c.exp_alerts.length > 0),
      `${alert} has a case where it fires`,
    );
    assert.ok(
      mine.some((c) => c.exp_alerts.length === 0),
      `${alert} has a case where it stays silent`,
    );
  }
});

test('promtool: the alert rules pass the lint and their unit tests', () => {
  const promtool = ensurePromtool();
  const check = spawnSync(promtool, ['check', 'rules', '--lint=all', '--lint-fatal', 'alerts.yml'], {
    cwd: PROMETHEUS,
    encoding: 'utf8',
  });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  const unit = spawnSync(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: PROMETHEUS, encoding: 'utf8' });
  assert.equal(unit.status, 0, `${unit.stdout}${unit.stderr}`);
  assert.match(unit.stdout, /SUCCESS/);
});
