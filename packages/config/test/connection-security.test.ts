import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, transportWarnings } from '@sluice/config';

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
      parseConfig(withKafka({ ssl: {}, sasl: { mechanism: 'oauthbearer', tokenFile: '/run/token' } })).kafka.sasl,
      {
        mechanism: 'oauthbearer',
        tokenFile: '/run/token',
      },
    );
    const oidc = parseConfig(
      withKafka({
        ssl: {},
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
      withKafka({ ssl: {}, sasl: { mechanism: 'plain', username: 'u' } }),
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
    fails(withKafka({ ssl: {}, sasl: { mechanism: 'oauthbearer' } }), 'kafka.sasl', /exactly one of tokenFile or oidc/);
    fails(
      withKafka({
        ssl: {},
        sasl: { mechanism: 'oauthbearer', oidc: { tokenEndpoint: 'ftp://x', clientId: 'c', clientSecret: 's' } },
      }),
      'kafka.sasl.oidc.tokenEndpoint',
      /https/,
    );
    fails(
      withKafka({ ssl: {}, sasl: { mechanism: 'plain', username: 'u', password: { env: 'NOPE' } } }),
      'kafka.sasl.password',
      /NOPE is not set/,
    );
    fails(withKafka({ ssl: { certFile: '/c.pem' } }), 'kafka.ssl.keyFile', /mutual TLS/);
    fails(withKafka({ ssl: { keyFile: '/k.pem' } }), 'kafka.ssl.certFile', /mutual TLS/);
    fails(withKafka({ ssl: { insecure: true } }), 'kafka.ssl.insecure', /not a known setting/);
    fails(withKafka({ ssl: { rejectUnauthorized: false } }), 'kafka.ssl.rejectUnauthorized', /not a known setting/);
  });
});

describe('config: transport security', () => {
  const oidc = (tokenEndpoint: string) => ({ tokenEndpoint, clientId: 'c', clientSecret: 's' });

  it('refuses an OIDC token endpoint that is not https, even over TLS to the brokers', () => {
    for (const url of ['http://idp.example/token', 'http://127.0.0.1:8080/token']) {
      fails(
        withKafka({ ssl: {}, sasl: { mechanism: 'oauthbearer', oidc: oidc(url) } }),
        'kafka.sasl.oidc.tokenEndpoint',
        /must use https \(the client secret is sent to it\), got http:/,
      );
    }
  });

  it('refuses SASL plain and oauthbearer without kafka.ssl, naming kafka.ssl and the opt-in', () => {
    fails(
      withKafka({ sasl: { mechanism: 'plain', username: 'u', password: 'p' } }),
      'kafka.ssl',
      /required with SASL mechanism plain: without TLS the password travels in clear .*kafka\.sasl\.allowPlaintext/,
    );
    fails(withKafka({ sasl: { mechanism: 'oauthbearer', tokenFile: '/t' } }), 'kafka.ssl', /oauthbearer/);
    fails(
      withKafka({ sasl: { mechanism: 'oauthbearer', oidc: oidc('https://idp.example/token') } }),
      'kafka.ssl',
      /the token travels in clear/,
    );
  });

  it('takes a plaintext listener only with kafka.sasl.allowPlaintext, and warns about it', () => {
    const config = parseConfig(
      withKafka({ sasl: { mechanism: 'plain', username: 'u', password: 'p', allowPlaintext: true } }),
    );
    assert.deepEqual(config.kafka.sasl, { mechanism: 'plain', username: 'u', password: 'p' });
    assert.deepEqual(transportWarnings(config), [
      'kafka.sasl.allowPlaintext: SASL plain without TLS; its credentials cross the network in clear',
    ]);
    const scram = parseConfig(withKafka({ sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' } }));
    assert.deepEqual(transportWarnings(scram), [], 'SCRAM never sends the password itself');
    const tls = parseConfig(withKafka({ ssl: {}, sasl: { mechanism: 'plain', username: 'u', password: 'p' } }));
    assert.deepEqual(transportWarnings(tls), []);
    fails(
      withKafka({ sasl: { mechanism: 'plain', username: 'u', password: 'p', allowPlaintext: 'yes' } }),
      'kafka.sasl.allowPlaintext',
      /boolean/,
    );
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
