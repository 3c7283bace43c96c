import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { REGISTRY_DEFAULTS } from './constants.ts';
import { SchemaRegistrationError, SchemaRegistryUnavailableError } from './errors.ts';

/** What reading one framed value through the registry came to (availability failures throw). */
export type RegistryRead =
  | { kind: 'value'; value: unknown }
  | { kind: 'unknown_schema'; message: string }
  | { kind: 'not_json'; message: string }
  | { kind: 'invalid'; message: string };

export interface RegistryClientOptions {
  /** Base URL of the Confluent-compatible API (for Apicurio it ends in `/apis/ccompat/v7`). */
  url: string;
  /** Default `REGISTRY_DEFAULTS.requestTimeoutMs`. */
  requestTimeoutMs?: number;
  /** Default `REGISTRY_DEFAULTS.unavailableRetryMs`. */
  unavailableRetryMs?: number;
  /** Default `REGISTRY_DEFAULTS.unknownIdCacheMs`. */
  unknownIdCacheMs?: number;
  /** Injected for tests; default real time. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** `ResponseError` of the client: `status` is the HTTP status, or 400 for a network error. */
function httpStatus(err: unknown): number | undefined {
  return err instanceof Error && err.name === 'ResponseError' ? (err as Error & { status?: number }).status : undefined;
}

const MAX_REMEMBERED_UNKNOWN_IDS = 1_024;

class DeadlineError extends Error {}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Thin adapter over `@kafkajs/confluent-schema-registry`: registers JSON Schemas and reads framed
 * values, turning the client's errors into three kinds of answer — a verdict on the record
 * (unknown id, not JSON, invalid), a value, or `SchemaRegistryUnavailableError` (thrown).
 */
export class RegistryClient {
  readonly url: string;
  readonly #client: SchemaRegistry;
  readonly #requestTimeoutMs: number;
  readonly #unavailableRetryMs: number;
  readonly #unknownIdCacheMs: number;
  readonly #unknownIds = new Map<number, number>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: RegistryClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#client = new SchemaRegistry({ host: this.url, clientId: 'sluice' });
    this.#requestTimeoutMs = options.requestTimeoutMs ?? REGISTRY_DEFAULTS.requestTimeoutMs;
    this.#unavailableRetryMs = options.unavailableRetryMs ?? REGISTRY_DEFAULTS.unavailableRetryMs;
    this.#unknownIdCacheMs = options.unknownIdCacheMs ?? REGISTRY_DEFAULTS.unknownIdCacheMs;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? defaultSleep;
  }

  /**
   * Registers `schema` (JSON Schema) under `subject` and returns its id. When the registration
   * itself is refused but the identical schema is already registered under the subject, that id is
   * used: this covers a subject whose compatibility level is not the client's default (BACKWARD),
   * which the client refuses outright, and two services registering at the same moment (the
   * client's follow-up `PUT /config/{subject}` then fails for the slower one on Apicurio).
   */
  async register(subject: string, schema: object): Promise<number> {
    const confluentSchema = { type: SchemaType.JSON, schema: JSON.stringify(schema) } as const;
    try {
      const { id } = await withDeadline(
        this.#client.register(confluentSchema, { subject }),
        this.#requestTimeoutMs,
        `register ${subject}`,
      );
      return id;
    } catch (err) {
      const failure = this.#classifyRegistration(subject, err);
      if (failure instanceof SchemaRegistryUnavailableError) throw failure;
      try {
        return await withDeadline(
          this.#client.getRegistryIdBySchema(subject, confluentSchema),
          this.#requestTimeoutMs,
          `look up ${subject}`,
        );
      } catch (lookupErr) {
        if (httpStatus(lookupErr) === 404) throw failure;
        throw this.#classifyRegistration(subject, lookupErr);
      }
    }
  }

  #classifyRegistration(subject: string, err: unknown): Error {
    if (err instanceof Error && err.name.startsWith('ConfluentSchemaRegistry')) {
      return new SchemaRegistrationError(subject, err.message, { cause: err });
    }
    const status = httpStatus(err);
    // 409 incompatible, 422 invalid schema, 401/403 auth: retrying will not help.
    if (status !== undefined && status >= 401 && status < 500 && status !== 408 && status !== 429) {
      return new SchemaRegistrationError(subject, (err as Error).message, { cause: err });
    }
    return new SchemaRegistryUnavailableError(
      `schema registry ${this.url} unavailable while registering ${subject}: ${(err as Error).message}`,
      { cause: err },
    );
  }

  /** Encodes `value` with the registered schema `schemaId` (validated locally against it). */
  async encode(schemaId: number, value: unknown): Promise<Buffer> {
    try {
      return await withDeadline(this.#client.encode(schemaId, value), this.#requestTimeoutMs, `schema ${schemaId}`);
    } catch (err) {
      if (err instanceof Error && err.name === 'ConfluentSchemaRegistryValidationError') throw err;
      throw new SchemaRegistryUnavailableError(
        `schema registry ${this.url} unavailable while fetching schema ${schemaId}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /**
   * Reads a Confluent-framed value. Retries while the registry is unreachable, for up to
   * `unavailableRetryMs`, then throws `SchemaRegistryUnavailableError`.
   */
  async read(framed: Buffer, schemaId: number): Promise<RegistryRead> {
    if (schemaId <= 0) return { kind: 'unknown_schema', message: `schema id ${schemaId} is not a registry id` };
    const forgetAt = this.#unknownIds.get(schemaId);
    if (forgetAt !== undefined) {
      if (forgetAt > this.#now()) return unknown(schemaId, this.url);
      this.#unknownIds.delete(schemaId);
    }
    const giveUpAt = this.#now() + this.#unavailableRetryMs;
    let delay: number = REGISTRY_DEFAULTS.retryInitialDelayMs;
    for (;;) {
      try {
        return {
          kind: 'value',
          value: await withDeadline(this.#client.decode(framed), this.#requestTimeoutMs, `schema ${schemaId}`),
        };
      } catch (err) {
        const verdict = this.#verdict(err, schemaId);
        if (verdict) return verdict;
        if (this.#now() + delay > giveUpAt) {
          throw new SchemaRegistryUnavailableError(
            `schema registry ${this.url} unavailable for ${this.#unavailableRetryMs} ms while fetching schema ${schemaId}: ${(err as Error).message}`,
            { cause: err },
          );
        }
        await this.#sleep(delay);
        delay = Math.min(delay * 2, REGISTRY_DEFAULTS.retryMaxDelayMs);
      }
    }
  }

  /** A verdict on the record, or `undefined` when the failure is the registry's (retry). */
  #verdict(err: unknown, schemaId: number): RegistryRead | undefined {
    if (httpStatus(err) === 404) {
      if (this.#unknownIds.size >= MAX_REMEMBERED_UNKNOWN_IDS) this.#unknownIds.clear(); // bounded under a flood of distinct bogus ids
      this.#unknownIds.set(schemaId, this.#now() + this.#unknownIdCacheMs);
      return unknown(schemaId, this.url);
    }
    if (err instanceof SyntaxError)
      return { kind: 'not_json', message: `payload of schema ${schemaId} is not JSON: ${err.message}` };
    if (err instanceof Error && err.name === 'ConfluentSchemaRegistryValidationError') {
      const paths = ((err as Error & { paths?: unknown[] }).paths ?? []).map(
        (p) => (Array.isArray(p) ? p.join('') : String(p)) || '(root)',
      );
      return { kind: 'invalid', message: `value does not match schema ${schemaId} at ${paths.join(', ') || '(root)'}` };
    }
    if (httpStatus(err) !== undefined || err instanceof DeadlineError) return undefined;
    // Anything else is about this schema, not the registry's health: an unsupported schema type,
    // a JSON Schema the client's Ajv cannot compile... Retrying cannot help, so it is a verdict.
    return { kind: 'unknown_schema', message: `schema ${schemaId} cannot be used: ${(err as Error).message}` };
  }
}

function unknown(schemaId: number, url: string): RegistryRead {
  return { kind: 'unknown_schema', message: `schema id ${schemaId} is not known to the schema registry ${url}` };
}
