import { EVENT_NOTES } from '../../domain/event-text.ts';

/**
 * The parts of the OpenAPI document (openapi.ts) that show how the log kept an event: an event the
 * JSON type refused, one cut for display, and records the database refused (docs/delivery-log.md,
 * "No record stops the log").
 */
export const eventAsText = {
  eventText: {
    type: ['string', 'null'],
    description: 'The event as text when it is not kept as JSON (then `event` is null), or cut for display; ≤ 256 KB',
  },
  eventNote: {
    type: ['string', 'null'],
    enum: [...EVENT_NOTES, null],
    description: 'Why `event` is not the whole event as sent (kept as text, cut), or null',
  },
};

export const unstoredList = {
  description: 'Records about the message the database refused (at most 20), with the reason',
  type: 'array',
  items: {
    type: 'object',
    required: ['kind', 'reason', 'at'],
    properties: {
      kind: { type: 'string' },
      reason: { type: 'string', enum: ['database_refused'] },
      at: { type: 'string', format: 'date-time' },
    },
  },
};
