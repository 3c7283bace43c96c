// `sluice config validate`, `sluice verify`, secrets from env and files, `--version`, and the config
// every Kafka command needs: no Kafka needed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { signBody } from '@sluice/webhook-signature';
import { DEMO_CONFIG_PATH } from '@sluice/config';
import { loadVector } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';
import { ROOT } from './code-facts.ts';

interface SignatureVector {
  secret: string;
  bodyBase64: string;
  xSignature: string;
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('config validate: the bundled demo config is valid (exit 0)', async () => {
  const { io, stdout } = memoryIo();
  assert.equal(await runCli(['config', 'validate', DEMO_CONFIG_PATH], io), 0);
  assert.match(stdout(), /^valid: .*local\.yaml \(1 sources, 1 destinations, 1 endpoints\)/);
});

test('config validate: exit 1 with the error naming the field', async () => {
  const cases: [string, string, RegExp][] = [
    [
      'bad-url.yaml',
      'destinations:\n  - id: d\n    type: webhooks\n    settings:\n      webhooks: [{ url: "ftp://x" }]\n',
      /destinations\[0\]\.settings\.webhooks\[0\]\.url/,
    ],
    ['unknown.json', '{"kafka":{"partitons":3}}', /kafka\.partitons: is not a known setting/],
    [
      'reserved.yaml',
      'destinations:\n  - id: d\n    type: webhooks\n    settings:\n      webhooks: [{ url: "https://x.example", headers: { X-Signature: a } }]\n',
      /headers/,
    ],
    ['not-yaml.yaml', 'sources: [\n', /is not valid YAML/],
    [
      'oidc-http.yaml',
      'kafka:\n  ssl: {}\n  sasl:\n    mechanism: oauthbearer\n    oidc: { tokenEndpoint: "http://idp.example/token", clientId: c, clientSecret: s }\n',
      /kafka\.sasl\.oidc\.tokenEndpoint: must use https/,
    ],
    [
      'plain-no-tls.yaml',
      'kafka:\n  sasl: { mechanism: plain, username: u, password: { env: KAFKA_PW } }\n',
      /kafka\.ssl: is required with SASL mechanism plain/,
    ],
  ];
  for (const [name, text, field] of cases) {
    const file = join(dir, name);
    writeFileSync(file, text);
    const { io, stdout, stderr } = memoryIo();
    assert.equal(await runCli(['config', 'validate', file], io), 1, name);
    assert.equal(stdout(), '');
    assert.match(stderr(), /^invalid: /, name);
    assert.match(stderr(), field, `${name}: ${stderr()}`);
  }
  const { io, stderr } = memoryIo();
  assert.equal(await runCli(['config', 'validate', join(dir, 'missing.yaml')], io), 1);
  assert.match(stderr(), /cannot read/);
});

test('config validate: warns about secrets written in clear and the plaintext SASL opt-in, still valid', async () => {
  const file = join(dir, 'clear.yaml');
  const passwordFile = join(dir, 'kafka-password');
  writeFileSync(passwordFile, 'kafka-pw\n');
  writeFileSync(
    file,
    [
      'sources: [{ id: s, writeKeys: [{ env: WK }] }]',
      'destinations:',
      '  - { id: d, type: webhooks, sourceIds: [s], settings: { webhooks: [{ url: "https://u:pw@h.example/in?t=1" }] } }',
      'kafka: { sasl: { mechanism: plain, username: u, password: { file: ' +
        JSON.stringify(passwordFile) +
        ' }, allowPlaintext: true } }',
      '',
    ].join('\n'),
  );
  const { io, stdout, stderr } = memoryIo('', { WK: 'write-key' });
  assert.equal(await runCli(['config', 'validate', file], io), 0, stderr());
  assert.match(stdout(), /^valid: /);
  assert.equal(
    stderr(),
    'warning: destinations[0].settings.webhooks[0].url: a secret written in the file; prefer { env: NAME } or { file: PATH }\n' +
      'warning: kafka.sasl.allowPlaintext: SASL plain without TLS; its credentials cross the network in clear\n',
  );
  assert.doesNotMatch(stdout() + stderr(), /pw/);
});

test('verify: every signature vector is valid; a wrong secret, signature or byte is invalid', async () => {
  for (const v of loadVector<SignatureVector[]>('signatures.json')) {
    const body = Buffer.from(v.bodyBase64, 'base64');
    const ok = memoryIo(body);
    assert.equal(await runCli(['verify', '--secret', v.secret, '--signature', v.xSignature], ok.io), 0);
    assert.equal(ok.stdout(), 'valid\n');
    for (const [input, secret, signature] of [
      [body, `${v.secret}-other`, v.xSignature],
      [body, v.secret, v.xSignature.replace(/^./, (c) => (c === '0' ? '1' : '0'))],
      [Buffer.concat([body, Buffer.from('\n')]), v.secret, v.xSignature],
    ] as const) {
      const bad = memoryIo(input);
      assert.equal(await runCli(['verify', '--secret', secret, '--signature', signature], bad.io), 1);
      assert.equal(bad.stderr(), 'invalid\n');
    }
  }
});

test('the bin shim: `sluice verify … < body.json` through a real process and stdin', () => {
  const v = loadVector<SignatureVector[]>('signatures.json')[2]!;
  const file = join(dir, 'body.json');
  writeFileSync(file, Buffer.from(v.bodyBase64, 'base64'));
  const run = (signature: string) =>
    spawnSync('bash', ['-c', `node packages/cli/bin/sluice.js verify --secret "$S" --signature "$H" < "$F"`], {
      env: { ...process.env, S: v.secret, H: signature, F: file },
      encoding: 'utf8',
    });
  const good = run(v.xSignature);
  assert.equal(good.status, 0, good.stderr);
  assert.equal(good.stdout, 'valid\n');
  const bad = run('0'.repeat(40));
  assert.equal(bad.status, 1);
  assert.equal(bad.stderr, 'invalid\n');
});

test('usage errors exit non-zero with commander’s message', async () => {
  const { io, stderr } = memoryIo();
  assert.notEqual(await runCli(['verify', '--secret', 's'], io), 0);
  assert.match(stderr(), /--signature/);
  const typo = memoryIo();
  assert.notEqual(await runCli(['send', '--write-key', 'k', '--type', 'bogus'], typo.io), 0);
  assert.match(typo.stderr(), /Allowed choices/);
});

test('--version prints the package version', async () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const { io, stdout } = memoryIo();
    assert.equal(await runCli([flag], io), 0);
    assert.equal(stdout(), `${version}\n`);
  }
});

test('verify: the secret from --secret-env or --secret-file (one trailing newline dropped)', async () => {
  const body = Buffer.from('{"type":"track","event":"Secret Check"}');
  const secret = 'file-or-env-secret';
  const signature = signBody(secret, body);
  const file = join(dir, 'secret.txt');
  writeFileSync(file, `${secret}\n`);
  const env = { ...process.env, HOOK_SECRET: secret };
  for (const flags of [
    ['--secret-env', 'HOOK_SECRET'],
    ['--secret-file', file],
  ]) {
    const ok = memoryIo(body, env);
    assert.equal(await runCli(['verify', ...flags, '--signature', signature], ok.io), 0, `${flags[0]}: ${ok.stderr()}`);
    assert.equal(ok.stdout(), 'valid\n');
    const bad = memoryIo(Buffer.concat([body, Buffer.from(' ')]), env);
    assert.equal(await runCli(['verify', ...flags, '--signature', signature], bad.io), 1);
    assert.equal(bad.stderr(), 'invalid\n');
  }
  writeFileSync(file, `${secret}\n\n`);
  const twoNewlines = memoryIo(body, env);
  assert.equal(
    await runCli(['verify', '--secret-file', file, '--signature', signature], twoNewlines.io),
    1,
    'only one newline is dropped',
  );
});

test('secrets: exactly one source, and a clear message for an unset variable, a missing or empty file', async () => {
  const empty = join(dir, 'empty.txt');
  writeFileSync(empty, '\n');
  const { HOOK_SECRET: _unset, ...env } = process.env;
  const cases: [string[], RegExp][] = [
    [['verify', '--signature', 'ab'], /give exactly one of --secret-env NAME, --secret-file PATH or --secret VALUE/],
    [['verify', '--secret', 's', '--secret-env', 'X', '--signature', 'ab'], /give exactly one of/],
    [
      ['verify', '--secret-env', 'HOOK_SECRET', '--signature', 'ab'],
      /--secret-env: environment variable HOOK_SECRET is not set or empty/,
    ],
    [
      ['verify', '--secret-file', join(dir, 'nope.txt'), '--signature', 'ab'],
      /--secret-file: cannot read .*nope\.txt: ENOENT/,
    ],
    [['verify', '--secret-file', empty, '--signature', 'ab'], /--secret-file: .*empty\.txt is empty/],
    [
      ['send', '--endpoint', 'http://127.0.0.1:1'],
      /give exactly one of --write-key-env NAME, --write-key-file PATH or --write-key VALUE/,
    ],
    [['send', '--write-key-env', 'HOOK_SECRET'], /--write-key-env: environment variable HOOK_SECRET is not set/],
  ];
  for (const [args, message] of cases) {
    const { io, stdout, stderr } = memoryIo('', env);
    assert.equal(await runCli(args, io), 1, args.join(' '));
    assert.match(stderr(), message, args.join(' '));
    assert.equal(stdout(), '');
  }
});

test('Kafka commands without --config or SLUICE_CONFIG fail naming both (no bundled fallback)', async () => {
  const { SLUICE_CONFIG: _unset, ...env } = process.env;
  for (const args of [['dlq', 'list'], ['dlq', 'replay', '--all'], ['topics']]) {
    const { io, stderr } = memoryIo('', { ...env, KAFKA_BROKERS: '127.0.0.1:1' });
    assert.equal(await runCli(args, io), 1, args.join(' '));
    assert.equal(
      stderr(),
      'no config file: pass --config <file> or set SLUICE_CONFIG (the topics and destinations come from it)\n',
    );
  }
});
