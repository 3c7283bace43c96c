import { CodedError } from '@sluice/errors';

/**
 * Typed failures of the codecs that are NOT a verdict on one record (those are `DecodeResult`s with
 * `ok: false`, which go to `sluice.rejected`). Each has a stable `code` and says whether trying
 * again later can help.
 */
export class CodecError extends CodedError {}

/**
 * The schema registry could not be reached (refused, timed out, 5xx) for longer than the codec's
 * retry budget. Retryable: the record is fine, the infrastructure is not. A consumer must NOT
 * reject the record; it lets the error end the process (offset not committed, so the record is
 * read again after the restart). Ingest answers 503 so the caller retries.
 */
export class SchemaRegistryUnavailableError extends CodecError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('registry_unavailable', message, true, options);
  }
}

/** The registry refused our schema (e.g. an incompatible change under BACKWARD). An operator must act. */
export class SchemaRegistrationError extends CodecError {
  readonly subject: string;
  constructor(subject: string, message: string, options?: { cause?: unknown }) {
    super('schema_registration_failed', `cannot register the schema under ${subject}: ${message}`, false, options);
    this.subject = subject;
  }
}

/** `encode` was given a value that does not satisfy the registered schema: a bug in the caller. */
export class InvalidValueError extends CodecError {
  constructor(message: string) {
    super('invalid_value', message, false);
  }
}
