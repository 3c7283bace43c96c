import { CodedError } from '@sluice/errors';

/** Typed errors of the destination-state library, each with a stable `code` and whether trying again can help. */
export class DestinationStateError extends CodedError {}

/** A value that is not a state record was about to be written. */
export class InvalidStateValueError extends DestinationStateError {
  constructor(key: string, why: string) {
    super('invalid_destination_state', `state of ${key} not written: ${why}`, false);
  }
}
