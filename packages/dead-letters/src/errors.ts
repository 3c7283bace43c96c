import { CodedError } from '@sluice/errors';

/** Typed errors of the dead-letter tools, each with a stable `code` and whether trying again can help. */
export class DeadLetterError extends CodedError {}

/** The read of the dead-letter topic got no record for too long (broker slow or unreachable). */
export class ReadTimeoutError extends DeadLetterError {
  constructor(topic: string, idleTimeoutMs: number) {
    super(
      'dead_letter_read_timeout',
      `reading ${topic}: no record for ${idleTimeoutMs} ms before reaching its end`,
      true,
    );
  }
}

/** A filter value the tools cannot use (e.g. `since` after `until`). */
export class InvalidFilterError extends DeadLetterError {
  constructor(message: string) {
    super('invalid_dead_letter_filter', message, false);
  }
}
