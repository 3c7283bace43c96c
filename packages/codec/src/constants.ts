/** The Confluent subject naming strategy Sluice uses (TopicNameStrategy): `<topic>-value`. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/** Defaults of the schema-registry codecs; each can be overridden in `RegistryCodecOptions`. */
export const REGISTRY_DEFAULTS = {
  /** One registry request (register, or fetch a schema by id) gives up after this long. */
  requestTimeoutMs: 5_000,
  /**
   * How long `decode` keeps retrying while the registry is unreachable before it throws
   * `SchemaRegistryUnavailableError`. Long enough to ride out a registry restart.
   */
  unavailableRetryMs: 30_000,
  /** First pause between retries while the registry is unreachable; doubles up to `retryMaxDelayMs`. */
  retryInitialDelayMs: 200,
  retryMaxDelayMs: 5_000,
  /**
   * A schema id the registry answered 404 for is remembered this long, so a burst of records with
   * a bogus id costs one lookup, not one per record. Short, because ids are never reused.
   */
  unknownIdCacheMs: 10_000,
} as const;
