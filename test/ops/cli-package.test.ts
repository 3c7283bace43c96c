// The CLI as users install it: `npm pack` of @sluice/cli → `npm install -g` into a scratch prefix,
// offline → `sluice` runs on a plain Node, outside the repository, with nothing else installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { signBody } from '@sluice/webhook-signature';
import { ROOT } from './code-facts.ts';
import { npmEnv, packWorkspace, plainEnv, run } from './npm-pack.ts';

const scratch = mkdtempSync(join(tmpdir(), 'sluice-cli-install-'));
const prefix = join(scratch, 'prefix');
const sluice = join(prefix, 'bin', 'sluice');
const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
let packed: ReturnType<typeof packWorkspace>;

before(() => {
  packed = packWorkspace(join(ROOT, 'packages/cli'));
  run('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', packed.tarball], {
    cwd: scratch,
    env: npmEnv(),
  });
});
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The installed `sluice`, from a folder outside the repository, on this Node and nothing else. */
const cli = (args: string[], input?: Buffer, env: NodeJS.ProcessEnv = {}) =>
  spawnSync(sluice, args, { cwd: scratch, env: plainEnv(env), input, encoding: 'utf8' });

test('the packed CLI is one JavaScript bundle with its licences, and depends on nothing', () => {
  assert.deepEqual(packed.files.filter((f) => f !== 'dist/LICENSE').sort(), [
    'dist/THIRD-PARTY-LICENSES.md',
    'dist/sluice.js',
    'package.json',
  ]);
  assert.deepEqual(packed.manifest.bin, { sluice: './dist/sluice.js' });
  for (const field of ['dependencies', 'exports', 'private', 'scripts'])
    assert.equal(packed.manifest[field], undefined, field);
  const licences = readFileSync(join(prefix, 'lib/node_modules/@sluice/cli/dist/THIRD-PARTY-LICENSES.md'), 'utf8');
  for (const name of ['commander', 'kafkajs', 'ajv', 'yaml']) assert.match(licences, new RegExp(`^## ${name} `, 'm'));
});

test('sluice --version and --help work from the installed bin', () => {
  const v = cli(['--version']);
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout, `${version}\n`);
  const help = cli(['--help']);
  assert.equal(help.status, 0, help.stderr);
  for (const command of ['config', 'send', 'dlq', 'verify', 'topics'])
    assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'));
});

test('offline commands: config validate, verify with a secret file, and a Kafka command without a config', () => {
  const good = join(scratch, 'sluice.yaml');
  writeFileSync(good, 'sources:\n  - id: web\n    writeKeys: [wk-1]\n');
  const valid = cli(['config', 'validate', good]);
  assert.equal(valid.status, 0, valid.stderr);
  assert.equal(valid.stdout, `valid: ${good} (1 sources, 0 destinations, 0 endpoints)\n`);
  const bad = join(scratch, 'bad.json');
  writeFileSync(bad, '{"kafka":{"partitons":3}}');
  const invalid = cli(['config', 'validate', bad]);
  assert.equal(invalid.status, 1);
  assert.match(invalid.stderr, /^invalid: .*kafka\.partitons: is not a known setting/);

  const body = Buffer.from('{"type":"track","event":"Installed"}');
  const secretFile = join(scratch, 'secret');
  writeFileSync(secretFile, 'installed-secret\n');
  const verified = cli(
    ['verify', '--secret-file', secretFile, '--signature', signBody('installed-secret', body)],
    body,
  );
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(verified.stdout, 'valid\n');

  const noConfig = cli(['dlq', 'list'], undefined, { KAFKA_BROKERS: '127.0.0.1:1' });
  assert.equal(noConfig.status, 1);
  assert.match(noConfig.stderr, /^no config file: pass --config <file> or set SLUICE_CONFIG/);
});
