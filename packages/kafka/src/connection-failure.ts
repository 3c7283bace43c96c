/** Why a Kafka connection failed, as far as an operator can act on it. */
export type KafkaFailureCause =
  | 'authentication failed'
  | 'certificate not trusted'
  | 'certificate does not match the broker address'
  | 'TLS handshake failed'
  | 'connection closed by the broker'
  | 'no OAuth token'
  | 'broker unreachable'
  | 'other';

export interface KafkaFailure {
  cause: KafkaFailureCause;
  /** One line for the log: the cause, what to check, and the client's own message. */
  line: string;
}

const UNTRUSTED_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
]);
const UNTRUSTED_TEXT = new RegExp(
  [
    'self[- ]signed certificate',
    'unable to verify',
    'unable to get (local )?issuer',
    'certificate (has expired|is not yet valid)',
  ].join('|'),
  'i',
);

interface ErrorLike {
  name?: string;
  message?: string;
  code?: string;
  cause?: unknown;
  originalError?: unknown;
}

/** The error and the errors it wraps (kafkajs nests them in `cause` / `originalError`). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = err;
  while (current && typeof current === 'object' && out.length < 8 && !out.includes(current as ErrorLike)) {
    const e = current as ErrorLike;
    out.push(e);
    current = e.cause ?? e.originalError;
  }
  return out;
}

/** Sorts a failed connect into a cause an operator can act on (wrong password, untrusted CA, ...). */
export function describeKafkaFailure(err: unknown): KafkaFailure {
  const errors = chain(err);
  const message = errors.map((e) => e.message ?? '').find(Boolean) ?? String(err);
  const has = (test: (e: ErrorLike) => boolean) => errors.some(test);
  const text = errors.map((e) => `${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`).join(' | ');
  if (has((e) => e.name === 'OAuthTokenError')) {
    return {
      cause: 'no OAuth token',
      line: `Kafka: no OAuth token (check kafka.sasl.tokenFile / kafka.sasl.oidc): ${message}`,
    };
  }
  if (
    has((e) => e.name === 'KafkaJSSASLAuthenticationError') ||
    /SASL .*(authentication failed|Invalid username or password)|Authentication failed/i.test(text)
  ) {
    return {
      cause: 'authentication failed',
      line: `Kafka: authentication failed (check kafka.sasl mechanism, username and password): ${message}`,
    };
  }
  if (has((e) => e.code !== undefined && UNTRUSTED_CODES.has(e.code)) || UNTRUSTED_TEXT.test(text)) {
    return {
      cause: 'certificate not trusted',
      line: `Kafka: the broker's certificate is not trusted (check kafka.ssl.caFile): ${message}`,
    };
  }
  if (has((e) => e.code === 'ERR_TLS_CERT_ALTNAME_INVALID') || /does not match certificate's altnames/i.test(text)) {
    return {
      cause: 'certificate does not match the broker address',
      line: `Kafka: the broker's certificate does not name the address in KAFKA_BROKERS: ${message}`,
    };
  }
  if (
    has((e) => e.code === 'EPROTO' || e.code === 'ECONNRESET') ||
    /SSL|TLS|wrong version number|handshake/i.test(text)
  ) {
    return {
      cause: 'TLS handshake failed',
      line: `Kafka: TLS handshake failed (is the listener TLS, and kafka.ssl set to match?): ${message}`,
    };
  }
  if (
    has((e) => e.name === 'KafkaJSConnectionClosedError') ||
    /^Closed connection$|closed by the server/i.test(message)
  ) {
    return {
      cause: 'connection closed by the broker',
      line:
        'Kafka: the broker closed the connection (a TLS or SASL listener reached without matching ' +
        `kafka.ssl / kafka.sasl?): ${message}`,
    };
  }
  if (
    has((e) => e.name === 'KafkaJSConnectionError' || e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND') ||
    /Connection (timeout|error)|ECONNREFUSED|ENOTFOUND/i.test(text)
  ) {
    return { cause: 'broker unreachable', line: `Kafka: broker unreachable (check KAFKA_BROKERS): ${message}` };
  }
  return { cause: 'other', line: `Kafka: cannot connect: ${message}` };
}
