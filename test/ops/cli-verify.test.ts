// `sluice verify` with Standard Webhooks signatures made by the reference library (npm standardwebhooks).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runCli } from '@sluice/cli';
import { signBody } from '@sluice/webhook-signature';
import { memoryIo } from './cli-io.ts';

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const BODY = Buffer.from('{"type":"track","event":"Ünïcode ✓","userId":"u-1"}');

/** Signs like a sender, `secondsAgo` in the past, with every secret given (rotation: one entry each). */
function signed(secrets: string[], secondsAgo = 0) {
  const at = new Date(Date.now() - secondsAgo * 1_000);
  return {
    id: 'msg-1',
    timestamp: String(Math.floor(at.getTime() / 1_000)),
    signature: secrets.map((s) => new Webhook(s).sign('msg-1', at, BODY.toString('utf8'))).join(' '),
  };
}

type Signed = { id?: string; timestamp?: string; signature: string };

async function verify(secret: string, s: Signed, extra: string[] = [], body = BODY) {
  const io = memoryIo(body);
  const args = ['verify', '--secret', secret, '--signature', s.signature];
  if (s.id !== undefined) args.push('--webhook-id', s.id);
  if (s.timestamp !== undefined) args.push('--webhook-timestamp', s.timestamp);
  const code = await runCli([...args, ...extra], io.io);
  return { code, out: io.stdout(), err: io.stderr() };
}

describe('sluice verify: Standard Webhooks', () => {
  it('a signature from the reference library is valid (scheme read from the v1, prefix)', async () => {
    const secret = whsec();
    assert.deepEqual(await verify(secret, signed([secret])), { code: 0, out: 'valid\n', err: '' });
  });

  it('either secret of a rotation verifies the space-separated header', async () => {
    const [old, next] = [whsec(), whsec()];
    const s = signed([old, next]);
    assert.equal((await verify(old, s)).code, 0);
    assert.equal((await verify(next, s)).code, 0);
    assert.deepEqual(await verify(whsec(), s), { code: 1, out: '', err: 'invalid: no signature matches\n' });
  });

  it('a changed byte, id or timestamp is invalid', async () => {
    const secret = whsec();
    const s = signed([secret]);
    assert.equal((await verify(secret, s, [], Buffer.concat([BODY, Buffer.from('\n')]))).code, 1);
    assert.equal((await verify(secret, { ...s, id: 'msg-2' })).code, 1);
    assert.equal((await verify(secret, { ...s, timestamp: String(Number(s.timestamp) - 1) })).code, 1);
  });

  it('the timestamp must be within the tolerance: 5 minutes by default, --tolerance to change it', async () => {
    const secret = whsec();
    const old = signed([secret], 10 * 60);
    const tooOld = 'invalid: webhook-timestamp is older than the tolerance\n';
    assert.deepEqual(await verify(secret, old), { code: 1, out: '', err: tooOld });
    assert.equal((await verify(secret, old, ['--tolerance', '15m'])).code, 0);
    assert.equal((await verify(secret, signed([secret], 4 * 60))).code, 0);
    assert.equal((await verify(secret, signed([secret], 4 * 60), ['--tolerance', '3m'])).code, 1);
    const tooNew = 'invalid: webhook-timestamp is further in the future than the tolerance\n';
    assert.equal((await verify(secret, signed([secret], -10 * 60))).err, tooNew);
    assert.match((await verify(secret, old, ['--tolerance', 'soon'])).err, /--tolerance must be a duration/);
  });

  it('names what is missing or malformed, never echoing the secret', async () => {
    const secret = whsec();
    const s = signed([secret]);
    assert.match((await verify(secret, { signature: s.signature })).err, /needs --webhook-id, --webhook-timestamp/);
    const short = `whsec_${randomBytes(8).toString('base64')}`;
    const bad = await verify(short, s);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /--secret must encode 24 to 64 random bytes, got 8/);
    assert.ok(!bad.err.includes(short));
  });

  it('--scheme x-signature forces the hex check; the X-Signature answer is unchanged', async () => {
    const hex = signBody('s3cret', BODY);
    const forced = await verify('s3cret', { signature: hex }, ['--scheme', 'x-signature']);
    assert.deepEqual(forced, { code: 0, out: 'valid\n', err: '' });
    assert.deepEqual(await verify('other', { signature: hex }), { code: 1, out: '', err: 'invalid\n' });
    const secret = whsec();
    assert.equal((await verify(secret, signed([secret]), ['--scheme', 'x-signature'])).code, 1);
  });
});
