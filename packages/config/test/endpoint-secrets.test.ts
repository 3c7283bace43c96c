import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, literalSecretFields, parseConfig } from '@sluice/config';

const dir = mkdtempSync(join(tmpdir(), 'sluice-secrets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const destination = (settings: Record<string, unknown>) => ({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: [{ id: 'd', type: 'webhooks', sourceIds: ['s'], settings }],
});

function fails(input: unknown, env: NodeJS.ProcessEnv, field: string, problem: RegExp): ConfigError {
  let caught: unknown;
  assert.throws(
    () => parseConfig(input, env),
    (err: unknown) => ((caught = err), err instanceof ConfigError && err.field === field && problem.test(err.problem)),
  );
  return caught as ConfigError;
}

describe('config: endpoint secrets from env and files', () => {
  it('takes the whole URL and header values from { env } and { file }; a file loses one trailing line break', () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'Bearer from-file\n');
    const config = parseConfig(
      destination({
        webhooks: [
          {
            url: { env: 'HOOK_URL' },
            headers: { Authorization: { file: tokenFile }, 'X-Api-Key': { env: 'API_KEY' }, 'X-Team': 'a' },
          },
        ],
      }),
      { HOOK_URL: 'https://hooks.example/in?token=t0k', API_KEY: 'k3y' },
    );
    const [endpoint] = config.destinations[0]!.endpoints;
    assert.equal(endpoint!.url, 'https://hooks.example/in?token=t0k');
    assert.deepEqual(endpoint!.headers, { Authorization: 'Bearer from-file', 'X-Api-Key': 'k3y', 'X-Team': 'a' });
    assert.equal(endpoint!.ref, 'https://hooks.example/in?***');
  });

  it('every other secret takes { file } too', () => {
    const keyFile = join(dir, 'write-key');
    writeFileSync(keyFile, 'wk-from-file\r\n');
    const config = parseConfig({ sources: [{ id: 's', writeKeys: [{ file: keyFile }] }] });
    assert.deepEqual(config.sources[0]!.writeKeys, ['wk-from-file']);
  });

  it('names the field of a missing variable, an unreadable or empty file, and never echoes a value', () => {
    fails(
      destination({ webhooks: [{ url: { env: 'NOPE' } }] }),
      {},
      'destinations[0].settings.webhooks[0].url',
      /NOPE/,
    );
    fails(
      destination({ webhooks: [{ url: 'https://h.example/', headers: { Authorization: { file: join(dir, 'no') } } }] }),
      {},
      'destinations[0].settings.webhooks[0].headers.Authorization',
      /cannot read secret file .*ENOENT/,
    );
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    fails(destination({ webhookUrl: { file: empty } }), {}, 'destinations[0].settings.webhookUrl', /is empty/);
    const bad = fails(
      destination({ webhooks: [{ url: { env: 'URL' } }] }),
      { URL: 'ftp://user:s3cret@h.example/?token=t0k' },
      'destinations[0].settings.webhooks[0].url',
      /must use http or https/,
    );
    assert.doesNotMatch(bad.message, /s3cret|t0k/);
    const header = fails(
      destination({ webhooks: [{ url: 'https://h.example/', headers: { Authorization: { env: 'AUTH' } } }] }),
      { AUTH: 'Bearer s3cret\n' },
      'destinations[0].settings.webhooks[0].headers.Authorization',
      /CR, LF/,
    );
    assert.doesNotMatch(header.message, /s3cret/);
    const duplicate = fails(
      destination({ webhooks: [{ url: { env: 'A' } }, { url: 'https://u:s3cret@h.example/x?t=t0k' }] }),
      { A: 'https://u:s3cret@h.example/x?t=t0k' },
      'destinations[0].settings.webhooks',
      /duplicate endpoint https:\/\/\*\*\*@h\.example\/x\?\*\*\*/,
    );
    assert.doesNotMatch(duplicate.message, /s3cret|t0k/);
    fails(
      destination({ webhooks: [{ url: { env: 'A', file: '/x' } }] }),
      {},
      'destinations[0].settings.webhooks[0].url',
      /non-empty string, \{ env: NAME \} or \{ file: PATH \}/,
    );
  });

  it('URL userinfo is sent as HTTP Basic authentication unless the endpoint sets Authorization', () => {
    const config = parseConfig(
      destination({
        webhooks: [
          { url: 'https://us%20er:p%40ss@a.example/x' },
          { url: 'https://user:pass@b.example/x', headers: { authorization: 'Bearer mine' } },
        ],
      }),
    );
    const [a, b] = config.destinations[0]!.endpoints;
    assert.equal(a!.headers.authorization, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`);
    assert.deepEqual(b!.headers, { authorization: 'Bearer mine' });
  });

  it('refs: each endpoint named by its redacted URL, #2 after an earlier one that redacts alike', () => {
    const config = parseConfig(
      destination({
        webhookUrl: 'https://h.example/x?token=a',
        webhooks: [{ url: 'https://h.example/x?token=b' }, { url: 'https://other.example/y' }],
      }),
    );
    assert.deepEqual(
      config.destinations[0]!.endpoints.map((e) => e.ref),
      ['https://h.example/x?***', 'https://h.example/x?***#2', 'https://other.example/y'],
    );
  });
});

describe('literalSecretFields', () => {
  it('lists every secret written in clear, and nothing given as { env } or { file }', () => {
    const raw = {
      sources: [{ id: 's', writeKeys: ['wk', { env: 'WK' }] }],
      destinations: [
        {
          id: 'd',
          settings: {
            sharedSecret: 'ss',
            webhookUrl: 'https://h.example/in',
            webhooks: [
              {
                url: 'https://u:p@h.example/a',
                headers: { Authorization: 'Bearer x', 'X-Team': 'a', 'X-Api-Key': { env: 'K' } },
              },
              { url: 'https://h.example/b?token=x', headers: { 'X-Hook-Token': 't' } },
              { url: { env: 'URL' } },
            ],
            signing: { standardWebhooks: { secrets: [{ secret: 'whsec_x' }, { secret: { file: '/s' } }] } },
          },
        },
      ],
      ingest: { adminToken: 'at' },
      deliveryLog: { adminToken: { env: 'T' }, databaseUrl: 'postgres://u:pw@db/sluice?sslmode=require' },
      kafka: { ssl: { keyPassword: 'kp' }, sasl: { password: 'pw', oidc: { clientSecret: 'cs' } } },
      schemaRegistry: { password: 'srp', bearerToken: { env: 'B' } },
      operatorEvents: { url: 'https://ops.example/in?key=k', secret: 'whsec_o' },
    };
    assert.deepEqual(literalSecretFields(raw), [
      'sources[0].writeKeys[0]',
      'destinations[0].settings.sharedSecret',
      'destinations[0].settings.webhooks[0].url',
      'destinations[0].settings.webhooks[0].headers.Authorization',
      'destinations[0].settings.webhooks[1].url',
      'destinations[0].settings.webhooks[1].headers.X-Hook-Token',
      'destinations[0].settings.signing.standardWebhooks.secrets[0].secret',
      'ingest.adminToken',
      'deliveryLog.databaseUrl',
      'kafka.sasl.password',
      'kafka.sasl.oidc.clientSecret',
      'kafka.ssl.keyPassword',
      'schemaRegistry.password',
      'operatorEvents.secret',
      'operatorEvents.url',
    ]);
    assert.deepEqual(
      literalSecretFields({ operatorEvents: { url: 'https://ops.example/in', secret: { env: 'S' } } }),
      [],
    );
    assert.deepEqual(literalSecretFields({ deliveryLog: { databaseUrl: 'postgres://u@db/x?sslmode=require' } }), []);
  });
});
