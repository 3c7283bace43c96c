import { DEFAULT_PAGE_SIZE, MAX_LEDGER_BUCKETS, MAX_LEDGER_SPAN_MS, MAX_PAGE_SIZE } from '../../constants.ts';
import { UNACCOUNTED_REASONS, UNSETTLED_STATES } from '@sluice/log-api';
import {
  allRequired,
  errors,
  id,
  json,
  nullable,
  queryId,
  queryTime,
  ref,
  time,
  queryLimit,
} from './openapi-schemas.ts';

const count = { type: 'integer', minimum: 0 } as const;
const figures = {
  accepted: { ...count, description: 'Deliveries of events received in the span (one per event and destination)' },
  delivered: count,
  filtered: count,
  dead: count,
  inFlight: { ...count, description: 'Not settled (delivered, filtered or dead): parked and unaccounted included' },
  parked: { ...count, description: 'Unsettled at a paused or disabled destination' },
  unaccounted: { ...count, description: 'Unsettled past the retry window plus the grace, not parked' },
  oldestUnsettledAt: nullable(time),
  oldestUnsettledAgeSeconds: nullable(count),
};

/** The ledger's schemas of the OpenAPI document (docs/delivery-log.md, "Ledger"). */
export const ledgerSchemas = {
  LedgerTotals: allRequired({ sourceId: id, destinationId: id, ...figures }),
  LedgerBucket: allRequired({ sourceId: id, destinationId: id, bucketStart: time, ...figures }),
  Ledger: allRequired({
    from: time,
    to: time,
    bucketSeconds: count,
    unaccountedBefore: {
      ...time,
      description: 'An unsettled delivery whose window runs from before this is unaccounted',
    },
    parkedDestinations: { type: 'array', items: id },
    totals: { type: 'array', items: ref('LedgerTotals') },
    buckets: { type: 'array', items: ref('LedgerBucket') },
  }),
  UnaccountedDelivery: allRequired({
    sourceId: id,
    messageId: id,
    destinationId: id,
    state: { type: 'string', enum: [...UNSETTLED_STATES], description: 'The last known state' },
    stateAt: time,
    receivedAt: time,
    windowFrom: { ...time, description: 'Where its retry window runs from: received, or first attempt of its run' },
    attempts: count,
    lastError: nullable({ type: 'string' }),
    reason: { type: 'string', enum: [...UNACCOUNTED_REASONS] },
    message: { type: 'string' },
  }),
  Unaccounted: allRequired({
    unaccountedBefore: time,
    total: count,
    unaccounted: { type: 'array', items: ref('UnaccountedDelivery') },
  }),
};

const sourceAndDestination = [
  queryId('sourceId', 'Only this source'),
  queryId('destinationId', 'Only this destination'),
];

export const ledgerPaths = {
  '/api/v1/ledger': {
    get: {
      operationId: 'ledger',
      summary: 'The ledger per source, destination and bucket of receive time, with totals',
      parameters: [
        queryTime(
          'from',
          `Received at or after (default: an hour before \`to\`); at most ${MAX_LEDGER_SPAN_MS / 86_400_000} days before \`to\`, and a range one answer may read (docs/delivery-log.md, "Ledger"): else a 400 on \`from\``,
        ),
        queryTime('to', 'Received before (default: now)'),
        {
          name: 'bucket',
          in: 'query',
          required: false,
          description: `Bucket width, 1m–24h; at most ${MAX_LEDGER_BUCKETS} buckets from \`from\` to \`to\``,
          schema: { type: 'string', pattern: '^\\d{1,4}(m|h)$', default: '1m' },
        },
        ...sourceAndDestination,
      ],
      responses: { '200': { description: 'The ledger', ...json(ref('Ledger')) }, ...errors },
    },
  },
  '/api/v1/ledger/unaccounted': {
    get: {
      operationId: 'ledgerUnaccounted',
      summary: 'The unaccounted deliveries, longest unaccounted first, with their last known state and why they count',
      description:
        "Without sourceId or destinationId, a tenant token's answer covers every destination of its tenant, chosen in the query (docs/reference/tenants.md)",
      parameters: [...sourceAndDestination, queryLimit({ max: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })],
      responses: { '200': { description: 'One page and the total', ...json(ref('Unaccounted')) }, ...errors },
    },
  },
};
