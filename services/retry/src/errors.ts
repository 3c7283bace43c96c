import { CodedError } from '@sluice/errors';

/** Typed errors of the retry service, each with a stable `code` (docs/CONVENTIONS.md). */
export class RetryServiceError extends CodedError {}

/** A record on `sluice.retry` or a delay tier whose retry-state headers cannot be read. */
export class UnreadableRetryRecordError extends RetryServiceError {
  constructor(message: string, options?: ErrorOptions) {
    super('invalid_retry_headers', message, false, options);
  }
}

/** A tier record without the due time the retry service itself writes. */
export class MissingDueTimeError extends RetryServiceError {
  constructor(topic: string) {
    super('missing_due_at', `record on ${topic} has no due time`, false);
  }
}

/** The retry settings of the config cannot work (e.g. no delay tier). */
export class InvalidRetrySettingsError extends RetryServiceError {
  constructor(message: string) {
    super('invalid_retry_settings', message, false);
  }
}

/** Handling a readable record failed in a way no check foresaw; the record is rejected, the partition goes on. */
export class UnprocessableRetryRecordError extends RetryServiceError {
  constructor(message: string, options?: ErrorOptions) {
    super('unprocessable', message, false, options);
  }
}
