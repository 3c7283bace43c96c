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

it('never writes Kafka credentials (kafka.sasl password, OIDC client secret, key passphrase)', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const logger = createLogger({ name: 't', destination: sink });
  const kafka = {
    ssl: { caFile: '/ca.pem', keyFile: '/k.pem', keyPassword: 'kp-secret' },
    sasl: {
      mechanism: 'scram-sha-512',
      username: 'sluice',
      password: 'scram-secret',
      oidc: { clientId: 'c', clientSecret: 'oidc-secret' },
    },
  };
  logger.info({ config: { kafka } }, 'config');
  logger.info({ kafka }, 'kafka');
  logger.info({ security: kafka }, 'security');
  logger.info({ sasl: kafka.sasl }, 'sasl');
  const out = lines.join('');
  for (const secret of ['kp-secret', 'scram-secret', 'oidc-secret'])
    assert.ok(!out.includes(secret), `leaked ${secret}: ${out}`);
  assert.match(out, /"username":"sluice"/);
});
