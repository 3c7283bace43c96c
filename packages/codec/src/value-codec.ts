import { isConfluentFramed } from './wire-format.ts';
import { InvalidValueError } from './errors.ts';
import { RegistryClient, type RegistryClientOptions } from './registry-client.ts';
import { unframeConfluent } from './wire-format.ts';

/** Why a value cannot be used: goes to `sluice.rejected` with this code. */
export type RejectCode = 'empty' | 'not_json' | 'invalid_envelope' | 'unknown_schema' | 'registry_unavailable';

export type ValueDecodeResult<T> =
  | { ok: true; value: T; format: 'json' | 'confluent' }
  | { ok: false; code: RejectCode; message: string };

/** Encodes values of one topic and reads both plain JSON and the Confluent wire format. */
export interface ValueCodec<T> {
  readonly format: 'json' | 'confluent';
  encode(value: T): Promise<Buffer>;
  decode(value: Buffer | null): Promise<ValueDecodeResult<T>>;
}

/** Checks a parsed value; returns a reason, or `undefined` when it is usable. */
export type ProblemFinder = (value: unknown) => string | undefined;

function parseJson<T>(payload: Buffer, problem: ProblemFinder, format: 'json' | 'confluent'): ValueDecodeResult<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    return { ok: false, code: 'not_json', message: `value is not JSON: ${(err as Error).message}` };
  }
  return checked(parsed, problem, format);
}

function checked<T>(value: unknown, problem: ProblemFinder, format: 'json' | 'confluent'): ValueDecodeResult<T> {
  const reason = problem(value);
  if (reason) return { ok: false, code: 'invalid_envelope', message: reason };
  return { ok: true, value: value as T, format };
}

/** Plain JSON on the wire; a Confluent-framed value cannot be read without a registry. */
export function createJsonValueCodec<T>(problem: ProblemFinder): ValueCodec<T> {
  return {
    format: 'json',
    encode: async (value) => Buffer.from(JSON.stringify(value)),
    decode: async (value) => {
      if (!value || value.length === 0) return { ok: false, code: 'empty', message: 'record has no value' };
      if (isConfluentFramed(value)) {
        return {
          ok: false,
          code: 'registry_unavailable',
          message: `record is in the Confluent wire format (schema id ${value.readUInt32BE(1)}) but no schema registry is configured`,
        };
      }
      return parseJson<T>(value, problem, 'json');
    },
  };
}

export interface RegistryValueCodecOptions extends Omit<RegistryClientOptions, 'url'> {
  /** Base URL of the Confluent-compatible registry API (`SCHEMA_REGISTRY_URL`). */
  url: string;
  /** Subject the schema is registered under, `<topic>-value`. */
  subject: string;
  /** The JSON Schema (draft-07, with `$schema`) registered under `subject` and used by `encode`. */
  schema: object;
  /** The same contract as code: applied after decoding whatever schema the writer used. */
  problem: ProblemFinder;
}

/**
 * The Confluent wire format through the registry. `encode` registers `schema` under `subject` on
 * first use (memoised; a failed registration is tried again by the next call) and frames values
 * with its id; the JSON after the 5-byte header is exactly what the JSON codec writes. `decode`
 * reads framed values (any schema id the registry knows, validated against the writer's schema and
 * then `problem`) and plain JSON alike. Unknown ids are a verdict (`unknown_schema`); an
 * unreachable registry is not — `decode` retries, then throws `SchemaRegistryUnavailableError`.
 */
export function createRegistryValueCodec<T>(
  options: RegistryValueCodecOptions,
): ValueCodec<T> & { schemaId(): Promise<number> } {
  const client = new RegistryClient(options);
  let registration: Promise<number> | undefined;
  const schemaId = (): Promise<number> => {
    registration ??= client.register(options.subject, options.schema).catch((err: unknown) => {
      registration = undefined;
      throw err;
    });
    return registration;
  };
  return {
    format: 'confluent',
    schemaId,
    encode: async (value) => {
      const reason = options.problem(value);
      if (reason) throw new InvalidValueError(`cannot encode for ${options.subject}: ${reason}`);
      const id = await schemaId();
      try {
        return await client.encode(id, value);
      } catch (err) {
        if (err instanceof Error && err.name === 'ConfluentSchemaRegistryValidationError') {
          throw new InvalidValueError(`cannot encode for ${options.subject}: value does not match schema ${id}`);
        }
        throw err;
      }
    },
    decode: async (value) => {
      if (!value || value.length === 0) return { ok: false, code: 'empty', message: 'record has no value' };
      const framed = unframeConfluent(value);
      if (!framed) return parseJson<T>(value, options.problem, 'json');
      const read = await client.read(value, framed.schemaId);
      switch (read.kind) {
        case 'value':
          return checked<T>(read.value, options.problem, 'confluent');
        case 'unknown_schema':
          return { ok: false, code: 'unknown_schema', message: read.message };
        case 'not_json':
          return { ok: false, code: 'not_json', message: read.message };
        case 'invalid':
          return { ok: false, code: 'invalid_envelope', message: read.message };
      }
    },
  };
}
