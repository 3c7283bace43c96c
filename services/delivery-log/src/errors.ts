import { CodedError } from '@sluice/errors';

/** Typed errors of the delivery log, each with a stable `code` (docs/CONVENTIONS.md). */
export class DeliveryLogError extends CodedError {}

/** A ledger request would read more than the ledger's bounds allow (`LEDGER_BOUNDS`): answered 400 on `from`. */
export class LedgerTooWideError extends DeliveryLogError {
  constructor(message: string, options?: ErrorOptions) {
    super('ledger_too_wide', message, false, options);
  }
}

/** The database could not be opened or migrated at start. */
export class DatabaseUnavailableError extends DeliveryLogError {
  constructor(message: string, options?: ErrorOptions) {
    super('database_unavailable', message, true, options);
  }
}
