/** Typed errors of the destination-state library, each with a stable `code` and whether trying again can help. */
export class DestinationStateError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  constructor(code: string, message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.retryable = retryable;
    this.name = new.target.name;
  }
}

/** A value that is not a state record was about to be written. */
export class InvalidStateValueError extends DestinationStateError {
  constructor(key: string, why: string) {
    super('invalid_destination_state', `state of ${key} not written: ${why}`, false);
  }
}
