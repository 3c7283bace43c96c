// `sluice verify --batch-id`: a batch body (as @sluice/webhook renders it) signed with X-Signature and with
// Standard Webhooks by the reference library (npm standardwebhooks), checked as a whole and as a batch document.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runCli } from '@sluice/cli';
import { renderBatchBody } from '@sluice/webhook';
import { signBody } from '@sluice/webhook-signature';
import { memoryIo } from './cli-io.ts';

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = 's3cret';
const EVENTS = [
  { messageId: 'm-1', body: Buffer.from('{"type":"track","event":"Ünïcode ✓","properties":{"n":1.50}}') },
  { messageId: 'm-2', body: Buffer.from('{"type":"identify","userId":"u-2"}') },
  { messageId: 'm-3', body: Buffer.from('{"type":"delete","userId":"u-3","timestamp":"2026-01-01T00:00:00.000Z"}') },
];
const BATCH = renderBatchBody('b-7', EVENTS);

async function verify(body: Buffer, args: string[]) {
  const io = memoryIo(body);
  const code = await runCli(['verify', ...args], io.io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** An X-Signature check of `body` as the batch `batchId`. */
const xSigned = (body: Buffer, batchId = 'b-7', extra: string[] = []) =>
  verify(body, ['--secret', SECRET, '--signature', signBody(SECRET, body), '--batch-id', batchId, ...extra]);

describe('sluice verify: a batch', () => {
  it('X-Signature over the whole body: valid, then the batch id, its size and every message id in order', async () => {
    assert.deepEqual(await xSigned(BATCH, 'b-7', ['--batch-size', '3']), {
      code: 0,
      out: 'valid\nbatch b-7: 3 events\nm-1\nm-2\nm-3\n',
      err: '',
    });
  });

  it('Standard Webhooks: the batch id is the webhook-id (taken from --batch-id when not given)', async () => {
    const secret = whsec();
    const at = new Date();
    const timestamp = String(Math.floor(at.getTime() / 1_000));
    const signature = new Webhook(secret).sign('b-7', at, BATCH.toString('utf8'));
    const base = ['--secret', secret, '--signature', signature, '--webhook-timestamp', timestamp];
    const valid = await verify(BATCH, [...base, '--batch-id', 'b-7']);
    assert.deepEqual([valid.code, valid.out], [0, 'valid\nbatch b-7: 3 events\nm-1\nm-2\nm-3\n']);
    assert.equal((await verify(BATCH, [...base, '--batch-id', 'b-7', '--webhook-id', 'b-7'])).code, 0);
    assert.deepEqual(await verify(BATCH, [...base, '--batch-id', 'b-7', '--webhook-id', 'm-1']), {
      code: 1,
      out: '',
      err: 'invalid: webhook-id is not the batch id (X-Batch-Id)\n',
    });
    const other = await verify(BATCH, [...base, '--batch-id', 'b-8']);
    assert.deepEqual([other.code, other.err], [1, 'invalid: no signature matches\n'], 'signed for another id');
  });

  it('a changed byte in one event fails the signature of the whole batch', async () => {
    const tampered = Buffer.from(BATCH.toString('utf8').replace('1.50', '1.5'));
    const r = await verify(tampered, ['--secret', SECRET, '--signature', signBody(SECRET, BATCH), '--batch-id', 'b-7']);
    assert.deepEqual(r, { code: 1, out: '', err: 'invalid\n' });
  });

  it('a signed body that is not a batch of that id is invalid, and says why', async () => {
    const doc = (value: unknown) => Buffer.from(JSON.stringify(value));
    const cases: [Buffer, string, string][] = [
      [BATCH, 'b-8', 'the body\'s "batchId" is not the X-Batch-Id header'],
      [Buffer.from('[1,2]'), 'b-7', 'the body is not a JSON object'],
      [Buffer.from('{"batchId":'), 'b-7', 'the body is not JSON'],
      [
        doc({ batchId: 'b-7', messageIds: ['a', 'b'], events: [{}] }),
        'b-7',
        '"messageIds" and "events" differ in length (2 and 1)',
      ],
      [doc({ batchId: 'b-7', messageIds: ['a', 'a'], events: [{}, {}] }), 'b-7', 'messageIds[1] repeats an earlier id'],
      [
        doc({ batchId: 'b-7', messageIds: ['a', 7], events: [{}, {}] }),
        'b-7',
        'messageIds[1] is not a non-empty string',
      ],
      [doc({ batchId: 'b-7', messageIds: 'a', events: [{}] }), 'b-7', '"messageIds" is not an array'],
      [doc({ batchId: 'b-7', messageIds: [], events: [] }), 'b-7', 'the batch holds no event'],
    ];
    for (const [body, batchId, problem] of cases) {
      // Signed with the batch id the check is given, so only the document is at fault.
      const r = await xSigned(body, batchId);
      assert.deepEqual(r, { code: 1, out: '', err: `invalid batch: ${problem}\n` }, problem);
    }
    const size = await xSigned(BATCH, 'b-7', ['--batch-size', '2']);
    assert.equal(size.err, 'invalid batch: X-Batch-Size is 2, the body holds 3 events\n');
    assert.match((await xSigned(BATCH, 'b-7', ['--batch-size', '0'])).err, /--batch-size.*must be a positive integer/);
  });

  it('prints ids from the body with their control characters escaped', async () => {
    const body = renderBatchBody('b-\u001b[2J', [{ messageId: 'm-\u001b]0;x\u0007', body: Buffer.from('{}') }]);
    const r = await xSigned(body, 'b-\u001b[2J');
    assert.deepEqual([r.code, r.out], [0, 'valid\nbatch b-\\x1b[2J: 1 event\nm-\\x1b]0;x\\x07\n']);
  });
});
