import { CodedError } from '@sluice/errors';

/** Base of every audience-sync error: a stable `code` and whether retrying may help (docs/CONVENTIONS.md). */
export class AudienceSyncError extends CodedError {
  constructor(code: string, message: string, retryable = false) {
    super(code, message, retryable);
  }
}

/** A snapshot chunk that breaks the contract of docs/reference/audiences.md; `field` names what is wrong. */
export class InvalidSnapshotError extends AudienceSyncError {
  readonly field: string;
  constructor(code: string, field: string, message: string) {
    super(code, `${field}: ${message}`);
    this.field = field;
  }
}

/** The HTTP body could not be read as a snapshot (too large, not JSON, wrong content type). */
export class BadRequestError extends AudienceSyncError {
  readonly status: number;
  constructor(code: string, message: string, status = 400) {
    super(code, message);
    this.status = status;
  }
}

/** Missing or wrong admin token on the snapshot API. */
export class UnauthorizedError extends AudienceSyncError {
  constructor() {
    super('unauthorized', 'a valid admin token is required (Authorization: Bearer <token>)');
  }
}

/** Kafka did not acknowledge a chunk in time; the caller should resend it. */
export class ProduceFailedError extends AudienceSyncError {
  constructor(message: string) {
    super('kafka_unavailable', message, true);
  }
}
