import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { createLogger } from '@sluice/logging';

it('never writes secrets or Authorization headers (docs/reference/observability.md, security.md)', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const logger = createLogger({ name: 't', destination: sink });
  logger.info(
    {
      req: { headers: { authorization: 'Basic c2VjcmV0Og==' } },
      sharedSecret: 'whsec',
      writeKey: 'wk-1',
      headers: { Authorization: 'Bearer x' },
      config: { adminToken: 'adm' },
    },
    'hello',
  );
  const out = lines.join('');
  for (const secret of ['c2VjcmV0Og', 'whsec', 'wk-1', 'Bearer x', 'adm"'])
    assert.ok(!out.includes(secret), `leaked ${secret}: ${out}`);
  assert.match(out, /\[redacted\]/);
});
