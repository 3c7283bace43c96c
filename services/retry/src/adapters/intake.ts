import type { ConsumedRecord } from '@sluice/kafka';
import { endSpan, headersOf, type Span, SpanKind, traceHeadersOf, type Tracing } from '@sluice/tracing';
import { nextAttempt, type BackoffSettings } from '../domain/backoff.ts';
import type { RetryRecordParts } from '../domain/records.ts';
import { guardRecord } from './record-guard.ts';
import { readState, type Router } from './router.ts';

export interface IntakeDeps {
  router: Router;
  /** Read per record so a config reload applies to the next retry. */
  backoff: () => BackoffSettings;
  now: () => number;
  random: () => number;
  /** Spans of retry scheduling and dead-lettering (docs/reference/observability.md, "Tracing"); default off. */
  tracing?: Tracing;
}

/**
 * Handles one record of `sluice.retry` (a failed delivery from the deliverer): computes its due
 * time and schedules it, or dead-letters it when no attempt may start any more — its window spent
 * (`window_exhausted`), or no endpoint named to retry (`no_endpoints`). A record that cannot be
 * handled goes to `sluice.rejected` (`guardRecord`). The trace context travels on in the record
 * headers; with tracing on, it is the context of this step's span.
 *
 * Whether the event's destination still exists is not asked to schedule it: a retry of a destination
 * gone meanwhile rides the tiers to its due time, and the deliverer's intake decision dead-letters it
 * then (`destination_deleted`, docs/deliverer.md "Intake"), so a destination created again with its
 * id before that time gets it. Only an event dead-lettered here (its window spent) while its
 * destination is gone is dead-lettered `destination_deleted` here, its queue released
 * (`Router#deadLetter`).
 */
export function createIntakeHandler(deps: IntakeDeps): (record: ConsumedRecord) => Promise<void> {
  const schedule = async (record: ConsumedRecord) => {
    const read = readState(record);
    if (!read.ok) return deps.router.reject(record, read.error);
    const { state } = read;
    const attributes = { 'sluice.message_id': state.messageId, 'sluice.destination': state.destinationId };
    // A retry naming no endpoint (the deliverer names those to retry): nothing to attempt.
    if (state.endpoints.length === 0) {
      const traced = trace(deps.tracing, 'dead-letter', record, { ...attributes, 'sluice.reason': 'no_endpoints' });
      return end(traced.span, deps.router.deadLetter(traced.parts, state, 'no_endpoints'));
    }
    const decision = nextAttempt({ state, settings: deps.backoff(), now: deps.now(), random: deps.random });
    if (decision.kind === 'dead') {
      const traced = trace(deps.tracing, 'dead-letter', record, { ...attributes, 'sluice.reason': decision.reason });
      return end(traced.span, deps.router.deadLetter(traced.parts, state, decision.reason));
    }
    const traced = trace(deps.tracing, 'retry schedule', record, {
      ...attributes,
      'sluice.attempt': state.attempts,
      'sluice.due_in_ms': Math.max(0, decision.dueAt - deps.now()),
    });
    await end(traced.span, deps.router.route(traced.parts, state, decision.dueAt));
  };
  return (record) => guardRecord(record, deps.router, () => schedule(record));
}

/** With tracing on, a span continuing the record's trace, and the record with the span's context in its headers. */
function trace(
  tracing: Tracing | undefined,
  name: string,
  record: ConsumedRecord,
  attributes: Record<string, string | number>,
): { parts: RetryRecordParts; span?: Span } {
  const parent = tracing?.enabled ? traceHeadersOf(record.headers) : undefined;
  if (!tracing?.traces(parent)) return { parts: record };
  const span = tracing.start(name, parent, { kind: SpanKind.PRODUCER, attributes });
  return { parts: { key: record.key, value: record.value, headers: { ...record.headers, ...headersOf(span) } }, span };
}

async function end(span: Span | undefined, written: Promise<void>): Promise<void> {
  try {
    await written;
    if (span) endSpan(span);
  } catch (err) {
    if (span) endSpan(span, (err as Error).message);
    throw err;
  }
}
