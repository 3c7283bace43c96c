/** Typed errors of the delivery log, each with a stable `code` (docs/CONVENTIONS.md). */
export class DeliveryLogError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
  }
}

/** The database could not be opened or migrated at start. */
export class DatabaseUnavailableError extends DeliveryLogError {
  constructor(message: string, options?: ErrorOptions) {
    super('database_unavailable', message, true, options);
  }
}
