import type { ConnectionOptions } from 'node:tls';
import type { KafkaSecurity } from '@sluice/config';
import type { Mechanism, SASLOptions } from 'kafkajs';
import { oauthBearerMechanism } from './oauth-bearer-authenticator.ts';
import { oidcTokenProvider, readPem, tokenFileProvider } from './oauth-token.ts';

/** kafkajs's `ssl` and `sasl` client options. */
export interface KafkaJsSecurity {
  ssl?: ConnectionOptions;
  sasl?: SASLOptions | Mechanism;
}

/**
 * Turns `kafka.ssl` / `kafka.sasl` into kafkajs options. Certificate files are read here, once per
 * client; the server certificate is always verified (there is deliberately no setting to turn
 * that off).
 */
export function kafkaJsSecurity(security: KafkaSecurity | undefined): KafkaJsSecurity {
  const out: KafkaJsSecurity = {};
  const ssl = security?.ssl;
  if (ssl) {
    out.ssl = {
      rejectUnauthorized: true,
      ...(ssl.caFile && { ca: [readPem(ssl.caFile, 'kafka.ssl.caFile')] }),
      ...(ssl.certFile && { cert: readPem(ssl.certFile, 'kafka.ssl.certFile') }),
      ...(ssl.keyFile && { key: readPem(ssl.keyFile, 'kafka.ssl.keyFile') }),
      ...(ssl.keyPassword && { passphrase: ssl.keyPassword }),
    };
  }
  const sasl = security?.sasl;
  if (sasl) {
    if (sasl.mechanism !== 'oauthbearer') {
      out.sasl = { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions;
    } else {
      const provider = 'tokenFile' in sasl ? tokenFileProvider(sasl.tokenFile) : oidcTokenProvider(sasl.oidc);
      out.sasl = oauthBearerMechanism(provider);
    }
  }
  return out;
}

/** Only the security keys of a `kafka` config section (what a worker thread or a child needs). */
export function kafkaSecurityOf(kafka: KafkaSecurity): KafkaSecurity {
  return { ...(kafka.ssl && { ssl: kafka.ssl }), ...(kafka.sasl && { sasl: kafka.sasl }) };
}
