import type { Destination, SluiceConfig } from '@sluice/config';
import { type EventEnvelope, noRequestRecord } from '@sluice/envelope';
import { filterAccepts } from '@sluice/event-filter';
import type { RecordSink } from '@sluice/kafka';
import type { DelivererMetrics } from '../service/metrics.ts';

export interface FilterDeps {
  config: () => SluiceConfig;
  sink: RecordSink;
  metrics: DelivererMetrics;
  now: () => number;
  /** Told of each verdict (a filter that refuses everything is an operator event). */
  watch?: FilterWatch;
}

/** One verdict of a destination's filter on an event. */
export interface FilterVerdict {
  destinationId: string;
  refused: boolean;
}

/** What the filtering tells of each verdict. */
export interface FilterWatch {
  filtered(verdict: FilterVerdict): void;
}

/** A new event as `filterRouted` judges it, with its record's key (written on its `filtered` records). */
export interface NewEvent {
  event: EventEnvelope;
  key: string | null;
}

/** The destinations a new event goes on to, and the `filtered` records written for the others. */
export interface Filtered {
  accepted: Destination[];
  /** Resolves when the `filtered` records are acknowledged; absent when no filter refused the event. */
  written?: Promise<void>;
}

/**
 * Applies each routed destination's `filter` to a new event (docs/reference/filters.md), before any
 * attempt: a destination whose filter refuses it gets one `sluice.attempts` record with the outcome
 * `filtered` (`attempt: 0`, no endpoint, no request) and `sluice_deliverer_filtered_total`, and
 * nothing else: no request, no retry, no dead letter. Retries are not filtered again: they are of
 * events the filter let through.
 */
export function filterRouted(deps: FilterDeps, incoming: NewEvent, routed: Destination[]): Filtered {
  const { event, key } = incoming;
  if (!routed.some((d) => d.filter !== undefined)) return { accepted: routed };
  const accepted: Destination[] = [];
  const writes: Promise<void>[] = [];
  for (const d of routed) {
    if (d.filter === undefined) accepted.push(d);
    else if (filterAccepts(d.filter, event)) {
      accepted.push(d);
      deps.watch?.filtered({ destinationId: d.id, refused: false });
    } else {
      deps.watch?.filtered({ destinationId: d.id, refused: true });
      deps.metrics.filtered.inc({ destination: d.id });
      writes.push(
        deps.sink.send(deps.config().kafka.topics.attempts, {
          key,
          value: noRequestRecord(
            { messageId: event.messageId, sourceId: event.sourceId, destinationId: d.id, eventType: event.type },
            'filtered',
            deps.now(),
          ),
        }),
      );
    }
  }
  if (writes.length === 0) return { accepted };
  return { accepted, written: writes.length === 1 ? writes[0] : Promise.all(writes).then(() => undefined) };
}
