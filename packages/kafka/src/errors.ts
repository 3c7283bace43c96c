import { CodedError } from '@sluice/errors';

/** Base of `@sluice/kafka`'s own errors: a stable `code`, and whether trying the same again can help. */
export class SluiceKafkaError extends CodedError {}

/**
 * Kafka refused one side record for its own content (`reason`: the broker's error, such as
 * `MESSAGE_TOO_LARGE`): trying it again cannot help, and the records sent beside it were written
 * (`RecordBatcher`). The caller decides what becomes of the work that wanted it written.
 */
export class SideRecordRefusedError extends SluiceKafkaError {
  readonly topic: string;
  readonly reason: string;

  constructor(topic: string, reason: string, options?: ErrorOptions) {
    super('side_record_refused', `Kafka refused a record for ${topic}: ${reason}`, false, options);
    this.topic = topic;
    this.reason = reason;
  }
}
