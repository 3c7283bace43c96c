import { CodedError } from '@sluice/errors';

/** Typed errors of the delivery log, each with a stable `code` (docs/CONVENTIONS.md). */
export class DeliveryLogError extends CodedError {}

/** The database could not be opened or migrated at start. */
export class DatabaseUnavailableError extends DeliveryLogError {
  constructor(message: string, options?: ErrorOptions) {
    super('database_unavailable', message, true, options);
  }
}
