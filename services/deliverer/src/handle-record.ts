import type { Destination, SluiceConfig } from '@sluice/config';
import type { EnvelopeCodec } from '@sluice/codec';
import {
  rejectedRecord,
  retryStateFromHeaders,
  RetryHeadersError,
  type EventEnvelope,
  type RetryState,
} from '@sluice/envelope';
import type { ConsumedRecord, RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { REJECT_ORIGIN } from './constants.ts';
import type { Delivery } from './delivery.ts';
import type { DeliveryJob } from './domain/delivery-job.ts';
import { encodeBody, renderBody } from './domain/render-body.ts';
import { routeEvent } from './domain/routing.ts';
import type { DelivererMetrics } from './metrics.ts';

export interface RecordHandlerDeps {
  config: () => SluiceConfig;
  /** The topics the consumer was subscribed to at start. */
  topics: { events: string; redeliver: string };
  codec: EnvelopeCodec;
  delivery: Delivery;
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
}

/**
 * The deliverer's record handler: a new event from `sluice.events` (decode, route, render once,
 * deliver to every routed destination) or a due retry from `sluice.redeliver` (the same bytes,
 * to the endpoints the retry names). Bad input goes to `sluice.rejected`; it never throws for it.
 */
export function createRecordHandler(deps: RecordHandlerDeps): (record: ConsumedRecord) => Promise<void> {
  const reject = async (record: ConsumedRecord, code: string, message: string, sourceId?: string) => {
    deps.metrics.rejected.inc({ topic: record.topic, code });
    deps.logger.warn(
      { topic: record.topic, partition: record.partition, offset: record.offset, code, message },
      'record rejected',
    );
    const rejected = rejectedRecord({
      code,
      message,
      origin: REJECT_ORIGIN,
      value: record.value,
      key: record.key?.toString() ?? null,
      from: `${record.topic}/${record.partition}/${record.offset}`,
      ...(sourceId !== undefined && { sourceId }),
    });
    await deps.sink.send(deps.config().kafka.topics.rejected, rejected);
  };

  const onEvent = async (record: ConsumedRecord) => {
    const decoded = await deps.codec.decode(record.value);
    if (!decoded.ok) return reject(record, decoded.code, decoded.message);
    const event = decoded.envelope;
    const destinations = routeEvent(event, deps.config().destinations);
    if (destinations.length === 0) return;
    const rendered = renderBody(event);
    if (!rendered.ok) return reject(record, rendered.code, rendered.message, event.sourceId);
    const body = encodeBody(rendered.body);
    const key = record.key?.toString() ?? null;
    // No named closure per event: tsx wraps each named closure in a costly `__name` call.
    if (destinations.length === 1)
      await deps.delivery.run(newEventJob(event, key, body, destinations[0]!), destinations[0]!);
    else await Promise.all(destinations.map((d) => deps.delivery.run(newEventJob(event, key, body, d), d)));
  };

  const onRedeliver = async (record: ConsumedRecord) => {
    let state: RetryState;
    try {
      state = retryStateFromHeaders(record.headers);
    } catch (err) {
      if (err instanceof RetryHeadersError) return reject(record, err.code, err.message);
      throw err;
    }
    if (!record.value || record.value.length === 0)
      return reject(record, 'empty', 'retry record has no body', state.sourceId);
    const job = {
      key: record.key?.toString() ?? `${state.sourceId}:`,
      body: record.value,
      messageId: state.messageId,
      sourceId: state.sourceId,
      destinationId: state.destinationId,
      eventType: state.eventType,
      endpoints: state.endpoints,
      previous: state,
    };
    const destination = deps.config().destinations.find((d) => d.id === state.destinationId);
    if (!destination || !destination.enabled) {
      return deps.delivery.deadLetter(
        job,
        'no_endpoints',
        `destination ${state.destinationId} is ${destination ? 'disabled' : 'gone'}`,
      );
    }
    await deps.delivery.run(job, destination);
  };

  return async (record) => {
    if (record.topic === deps.topics.redeliver) return onRedeliver(record);
    if (record.topic === deps.topics.events) return onEvent(record);
    deps.logger.warn({ topic: record.topic }, 'record from an unexpected topic ignored');
  };
}

function newEventJob(event: EventEnvelope, key: string | null, body: Buffer, destination: Destination): DeliveryJob {
  const job: DeliveryJob = {
    key,
    body,
    messageId: event.messageId,
    sourceId: event.sourceId,
    destinationId: destination.id,
    eventType: event.type,
    endpoints: destination.endpoints.map((e) => e.url),
  };
  if (event.receivedAt !== undefined) job.receivedAt = event.receivedAt;
  return job;
}
