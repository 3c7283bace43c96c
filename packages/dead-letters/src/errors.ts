/** Typed errors of the dead-letter tools, each with a stable `code`. */
export class DeadLetterError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The bounded read did not reach the high watermarks in time (broker slow or unreachable). */
export class ReadTimeoutError extends DeadLetterError {
  constructor(topic: string, timeoutMs: number) {
    super('dead_letter_read_timeout', `reading ${topic} did not reach its end within ${timeoutMs} ms`);
  }
}

/** A filter value the tools cannot use (e.g. `since` after `until`). */
export class InvalidFilterError extends DeadLetterError {
  constructor(message: string) {
    super('invalid_dead_letter_filter', message);
  }
}
