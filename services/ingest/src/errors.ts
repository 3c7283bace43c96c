import { CodedError } from '@sluice/errors';

/**
 * Whole-request failures of ingest (docs/reference/tracking-api.md). Each has a stable `code` (the `code` of the error
 * body), whether the client should retry the same request later (`retryable`), and the HTTP status it maps to;
 * handlers throw them and one place renders them.
 */
export class IngestError extends CodedError {
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(
    code: string,
    status: number,
    message: string,
    options: { retryable?: boolean; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(
      code,
      message,
      options.retryable ?? false,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = status;
    this.headers = options.headers ?? {};
  }
}

export class InvalidJsonError extends IngestError {
  constructor(detail: string) {
    super('invalid_json', 400, `request body is not valid JSON: ${detail}`);
  }
}

export class InvalidBodyError extends IngestError {
  constructor(detail: string) {
    super('invalid_body', 400, detail);
  }
}

export class MalformedGzipError extends IngestError {
  constructor(detail: string) {
    super('invalid_encoding', 400, `request body could not be decompressed: ${detail}`);
  }
}

export class BodyTooLargeError extends IngestError {
  constructor(limit: number) {
    super('body_too_large', 400, `request body exceeds ${limit} bytes after decompression`);
  }
}

export class TooManyCallsError extends IngestError {
  constructor(count: number, limit: number) {
    super('too_many_calls', 400, `batch has ${count} calls; at most ${limit} are allowed`);
  }
}

export class UnsupportedMediaTypeError extends IngestError {
  constructor(what: string) {
    super('unsupported_media_type', 415, what);
  }
}

export class UnauthorizedError extends IngestError {
  constructor(message = 'missing or unknown write key') {
    super('unauthorized', 401, message);
  }
}

export class RateLimitedError extends IngestError {
  constructor(retryAfterSeconds: number) {
    super('rate_limited', 429, 'rate limit exceeded for this source', {
      retryable: true,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

export class KafkaUnavailableError extends IngestError {
  constructor(cause?: unknown) {
    super('kafka_unavailable', 503, 'events could not be stored; retry later', {
      retryable: true,
      headers: { 'retry-after': '1' },
      cause,
    });
  }
}

export class NotFoundError extends IngestError {
  constructor() {
    super('not_found', 404, 'no such route');
  }
}

export class MethodNotAllowedError extends IngestError {
  constructor() {
    super('method_not_allowed', 405, 'use POST');
  }
}

/** The error body of docs/reference/tracking-api.md. */
export function errorBody(err: IngestError): string {
  return JSON.stringify({ success: false, code: err.code, message: err.message });
}
