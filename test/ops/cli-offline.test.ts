// `sluice config validate` and `sluice verify`: no Kafka needed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { DEMO_CONFIG_PATH } from '@sluice/config';
import { loadVector } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';

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

test('verify: every shared signature vector is valid; a wrong secret, signature or byte is invalid', async () => {
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
