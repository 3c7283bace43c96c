import type { WireMessage } from './message-types.ts';

/**
 * Every error the client throws or reports is an `AnalyticsError` with a stable `code`.
 * Branch on `code` (or `instanceof`), never on `message`.
 */
export class AnalyticsError extends Error {
  readonly code: string;
  /** Whether sending again could succeed. */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** A constructor option is invalid. Thrown by `new Analytics()`. */
export class InvalidOptionError extends AnalyticsError {
  constructor(message: string) {
    super('invalid_option', message);
  }
}

/** A call lacks a required field or has a field of the wrong type. Thrown by the call. */
export class ValidationError extends AnalyticsError {
  constructor(message: string) {
    super('invalid_message', message);
  }
}

/** A call serialises to more than 32,000 bytes. Thrown by the call. */
export class MessageTooLargeError extends AnalyticsError {
  readonly bytes: number;
  constructor(bytes: number, limit: number) {
    super('message_too_large', `message is ${bytes} bytes serialised; the limit is ${limit}`);
    this.bytes = bytes;
  }
}

/** The client was closed. Thrown by calls made after `close()`. */
export class ClientClosedError extends AnalyticsError {
  constructor() {
    super('client_closed', 'the client is closed');
  }
}

/** `maxQueueSize` messages are already waiting. Thrown by the call. */
export class QueueFullError extends AnalyticsError {
  constructor(limit: number) {
    super('queue_full', `${limit} messages are already queued`, { retryable: true });
  }
}

/** A batch could not be delivered. Reported through `onError` and the `'error'` event. */
export class DeliveryError extends AnalyticsError {
  /** The messages of the batch, as they were sent. */
  readonly messages: readonly WireMessage[];
  /** HTTP attempts made. */
  readonly attempts: number;
  /** Status of the last response, when there was one. */
  readonly status: number | undefined;

  constructor(
    code: string,
    message: string,
    details: { messages: readonly WireMessage[]; attempts: number; status?: number; cause?: unknown },
  ) {
    super(code, message, { cause: details.cause });
    this.messages = details.messages;
    this.attempts = details.attempts;
    this.status = details.status;
  }
}

/** The server answered with a status that is never retried (4xx other than 429). */
export class BatchRejectedError extends DeliveryError {
  constructor(status: number, body: string, messages: readonly WireMessage[], attempts: number) {
    super('batch_rejected', `server rejected the batch with HTTP ${status}${body ? `: ${body}` : ''}`, {
      messages,
      attempts,
      status,
    });
  }
}

/** Network errors, 5xx or 429 persisted through every retry. */
export class RetriesExhaustedError extends DeliveryError {
  constructor(attempts: number, last: { status?: number; cause?: unknown }, messages: readonly WireMessage[]) {
    const why = last.status !== undefined ? `HTTP ${last.status}` : describeCause(last.cause);
    super('retries_exhausted', `batch not delivered after ${attempts} attempts (last: ${why})`, {
      messages,
      attempts,
      ...last,
    });
  }
}

function describeCause(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
