/**
 * Broker answers that say "not yet" rather than "no": a partition without a leader (right after
 * its topic was created, or while leadership moves), a coordinator still loading, a request that
 * timed out. kafkajs's own names (`NOT_LEADER_FOR_PARTITION` is Kafka's `NOT_LEADER_OR_FOLLOWER`).
 */
const RETRIABLE_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'REQUEST_TIMED_OUT',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'NETWORK_EXCEPTION',
  'GROUP_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'NOT_ENOUGH_REPLICAS',
  'REBALANCE_IN_PROGRESS',
  'NOT_CONTROLLER',
  'KAFKA_STORAGE_ERROR',
]);

/** kafkajs errors that only carry another one: the one they carry decides. */
const WRAPPERS = new Set(['KafkaJSNonRetriableError', 'KafkaJSNumberOfRetriesExceeded']);

/** Failures no wait mends: a wrong password, a broker too old, a bug. */
const FATAL_NAMES = new Set([
  'KafkaJSSASLAuthenticationError',
  'KafkaJSServerDoesNotSupportApiKey',
  'KafkaJSNotImplemented',
  'KafkaJSUnsupportedMagicByteInMessageSet',
  'OAuthTokenError',
  'TypeError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
]);

/** The connection failed or was cut: the broker may be restarting or still starting. */
const CONNECTION_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
]);
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

interface ErrorLike {
  name?: string;
  type?: string;
  code?: unknown;
  retriable?: boolean;
  retryable?: boolean;
  cause?: unknown;
  originalError?: unknown;
}

/** The error and those it wraps (kafkajs nests them in `cause`, some in `originalError`). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = err;
  while (current !== null && typeof current === 'object' && out.length < 8 && !out.includes(current as ErrorLike)) {
    const e = current as ErrorLike;
    out.push(e);
    current = e.cause ?? e.originalError;
  }
  return out;
}

function fatal(e: ErrorLike): boolean {
  if (e.name !== undefined && FATAL_NAMES.has(e.name)) return true;
  // A protocol error kafkajs calls final (an authorization failure, an invalid config, ...).
  return e.name === 'KafkaJSProtocolError' && e.retriable === false && !RETRIABLE_TYPES.has(e.type ?? '');
}

function retriableItself(e: ErrorLike): boolean {
  if (e.name !== undefined && WRAPPERS.has(e.name)) return false;
  return (
    (e.type !== undefined && RETRIABLE_TYPES.has(e.type)) ||
    (e.name !== undefined && CONNECTION_NAMES.has(e.name)) ||
    (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) ||
    e.retriable === true ||
    e.retryable === true
  );
}

/**
 * True when `err` is a broker answer that a later try may not get: one of the errors above,
 * kafkajs's `retriable` errors, and kafkajs's "retries exceeded" (or non-retriable) wrapper around
 * such an error. False when anything in the chain is final (authentication, authorization, an
 * unsupported broker, a programming error) or nothing in it says "try again".
 */
export function isRetriableKafkaError(err: unknown): boolean {
  const errors = chain(err);
  if (errors.some(fatal)) return false;
  return errors.some(retriableItself);
}

/** The broker's answer in a few words, for the log and `/readyz`: `NOT_LEADER_FOR_PARTITION`, `Connection error: ...`. */
export function describeKafkaAnswer(err: unknown): string {
  const errors = chain(err);
  const typed = errors.find((e) => e.type !== undefined);
  if (typed?.type) return typed.type;
  const inner = errors.findLast((e) => typeof (e as Error).message === 'string' && (e as Error).message !== '');
  return inner ? `${inner.name ?? 'Error'}: ${(inner as Error).message}` : String(err);
}

/**
 * True when `err` carries a broker's own retriable answer (`NOT_LEADER_FOR_PARTITION`, ...): the
 * broker took the connection and the credentials, and said "not yet" about partitions.
 */
export function isRetriableBrokerAnswer(err: unknown): boolean {
  return isRetriableKafkaError(err) && chain(err).some((e) => e.type !== undefined && RETRIABLE_TYPES.has(e.type));
}
