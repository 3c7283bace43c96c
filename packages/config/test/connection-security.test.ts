import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '@sluice/config';

const withKafka = (kafka: Record<string, unknown>) => ({ kafka });

function fails(input: unknown, field: string, problem: RegExp, env: NodeJS.ProcessEnv = {}): void {
  assert.throws(
    () => parseConfig(input, env),
    (err: unknown) => err instanceof ConfigError && err.field === field && problem.test(err.problem),
  );
}

describe('config: kafka.ssl and kafka.sasl', () => {
  it('leaves both unset by default (plaintext, no authentication)', () => {
    const config = parseConfig({});
    assert.equal(config.kafka.ssl, undefined);
    assert.equal(config.kafka.sasl, undefined);
  });

  it('takes TLS with a CA and a client certificate, and SCRAM with the password from the environment', () => {
    const config = parseConfig(
      withKafka({
        ssl: {
          caFile: '/etc/kafka/ca.pem',
          certFile: '/etc/kafka/client.pem',
          keyFile: '/etc/kafka/client.key',
          keyPassword: { env: 'KEY_PW' },
        },
        sasl: { mechanism: 'scram-sha-512', username: 'sluice', password: { env: 'KAFKA_PASSWORD' } },
      }),
      { KAFKA_PASSWORD: 'pw-1', KEY_PW: 'kp' },
    );
    assert.deepEqual(config.kafka.ssl, {
      caFile: '/etc/kafka/ca.pem',
      certFile: '/etc/kafka/client.pem',
      keyFile: '/etc/kafka/client.key',
      keyPassword: 'kp',
    });
    assert.deepEqual(config.kafka.sasl, { mechanism: 'scram-sha-512', username: 'sluice', password: 'pw-1' });
    assert.equal(config.kafka.clientId, 'sluice');
  });

  it('takes TLS with the system roots (ssl: {})', () => {
    assert.deepEqual(parseConfig(withKafka({ ssl: {} })).kafka.ssl, {});
  });

  it('takes oauthbearer with a token file or with OIDC client credentials', () => {
    assert.deepEqual(
      parseConfig(withKafka({ sasl: { mechanism: 'oauthbearer', tokenFile: '/run/token' } })).kafka.sasl,
      {
        mechanism: 'oauthbearer',
        tokenFile: '/run/token',
      },
    );
    const oidc = parseConfig(
      withKafka({
        sasl: {
          mechanism: 'oauthbearer',
          oidc: {
            tokenEndpoint: 'https://idp.example/token',
            clientId: 'sluice',
            clientSecret: { env: 'OIDC' },
            scope: 'kafka',
          },
        },
      }),
      { OIDC: 'cs' },
    ).kafka.sasl;
    assert.deepEqual(oidc, {
      mechanism: 'oauthbearer',
      oidc: { tokenEndpoint: 'https://idp.example/token', clientId: 'sluice', clientSecret: 'cs', scope: 'kafka' },
    });
  });

  it('names the field of every mistake', () => {
    fails(
      withKafka({ sasl: { mechanism: 'scram', username: 'u', password: 'p' } }),
      'kafka.sasl.mechanism',
      /allowed values/,
    );
    fails(
      withKafka({ sasl: { mechanism: 'plain', username: 'u' } }),
      'kafka.sasl.password',
      /required for mechanism plain/,
    );
    fails(withKafka({ sasl: { mechanism: 'scram-sha-256', password: 'p' } }), 'kafka.sasl.username', /required/);
    fails(
      withKafka({ sasl: { mechanism: 'plain', username: 'u', password: 'p', tokenFile: '/t' } }),
      'kafka.sasl.tokenFile',
      /does not apply/,
    );
    fails(withKafka({ sasl: { mechanism: 'oauthbearer', username: 'u' } }), 'kafka.sasl.username', /does not apply/);
    fails(withKafka({ sasl: { mechanism: 'oauthbearer' } }), 'kafka.sasl', /exactly one of tokenFile or oidc/);
    fails(
      withKafka({
        sasl: { mechanism: 'oauthbearer', oidc: { tokenEndpoint: 'ftp://x', clientId: 'c', clientSecret: 's' } },
      }),
      'kafka.sasl.oidc.tokenEndpoint',
      /https/,
    );
    fails(
      withKafka({ sasl: { mechanism: 'plain', username: 'u', password: { env: 'NOPE' } } }),
      'kafka.sasl.password',
      /NOPE is not set/,
    );
    fails(withKafka({ ssl: { certFile: '/c.pem' } }), 'kafka.ssl.keyFile', /mutual TLS/);
    fails(withKafka({ ssl: { keyFile: '/k.pem' } }), 'kafka.ssl.certFile', /mutual TLS/);
    fails(withKafka({ ssl: { insecure: true } }), 'kafka.ssl.insecure', /not a known setting/);
    fails(withKafka({ ssl: { rejectUnauthorized: false } }), 'kafka.ssl.rejectUnauthorized', /not a known setting/);
  });
});

describe('config: schemaRegistry', () => {
  it('is absent by default, takes Basic credentials or a bearer token from the environment, and a CA file', () => {
    assert.equal(parseConfig({}).schemaRegistry, undefined);
    assert.deepEqual(
      parseConfig(
        { schemaRegistry: { username: 'key', password: { env: 'SR_SECRET' }, caFile: '/ca.pem' } },
        { SR_SECRET: 'sec' },
      ).schemaRegistry,
      { username: 'key', password: 'sec', caFile: '/ca.pem' },
    );
    assert.deepEqual(
      parseConfig({ schemaRegistry: { bearerToken: { env: 'SR_TOKEN' } } }, { SR_TOKEN: 't' }).schemaRegistry,
      { bearerToken: 't' },
    );
  });

  it('names the field of every mistake', () => {
    fails({ schemaRegistry: { username: 'u' } }, 'schemaRegistry.password', /go together/);
    fails({ schemaRegistry: { password: 'p' } }, 'schemaRegistry.username', /go together/);
    fails(
      { schemaRegistry: { username: 'u', password: 'p', bearerToken: 't' } },
      'schemaRegistry.bearerToken',
      /one or the other/,
    );
    fails({ schemaRegistry: { bearerToken: { env: 'MISSING' } } }, 'schemaRegistry.bearerToken', /MISSING is not set/);
    fails({ schemaRegistry: { url: 'https://x' } }, 'schemaRegistry.url', /not a known setting/);
  });
});
