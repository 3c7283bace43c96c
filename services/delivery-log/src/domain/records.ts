import { headerText, REJECT_HEADERS, RETRY_HEADERS, isJsonObject, retryStateFromHeaders } from '@sluice/envelope';
import type { AttemptEvent } from '@sluice/envelope';
import { REPLAY_HEADERS } from '@sluice/dead-letters';
import type { ConsumedRecord } from '@sluice/kafka';
import { traceHeadersOf, traceIdOf } from '@sluice/tracing';
import { MAX_ID_LENGTH, MAX_TEXT_LENGTH } from '../constants.ts';
import { storableJson, storableText } from './storable-text.ts';

/** Where a record was read: the idempotency key of everything it says. */
export interface RecordPosition {
  topic: string;
  partition: number;
  offset: string;
}

export interface EventEntry {
  kind: 'event';
  sourceId: string;
  messageId: string;
  eventType: string;
  /** Epoch ms ingest received the event (`receivedAt`), else the record time. */
  receivedAt: number;
  /** The event as read, JSON text. */
  event: string;
  /** The parsed event (for routing). */
  envelope: Record<string, unknown>;
  /** Destinations the event is routed to, filled in by the ingestion (the config decides). */
  destinationIds: string[];
  /** The event's `userId`: what a deletion request (`type: 'delete'`) names. */
  userId?: string;
  /** The trace id of the record's `traceparent` header (docs/operations.md, "Following one event"). */
  traceId?: string;
}

export interface AttemptEntry {
  kind: 'attempt';
  position: RecordPosition;
  sourceId: string;
  messageId: string;
  destinationId: string;
  eventType: string;
  endpoint: string;
  attempt: number;
  outcome: 'success' | 'retryable' | 'permanent';
  status?: number;
  error?: string;
  latencyMs: number;
  at: number;
  responseSnippet?: string;
  /** The batch the event went in (docs/reference/batches.md), clipped like the other ids. */
  batchId?: string;
  /** How many events that batch held. */
  batchSize?: number;
}

/** What a record of an event not attempted (filtered, waiting) says of it: which, where to, and when. */
interface UnattemptedEntry {
  position: RecordPosition;
  sourceId: string;
  messageId: string;
  destinationId: string;
  eventType: string;
  at: number;
}

/** A destination's filter refused the event: no attempt was made (docs/reference/filters.md). */
export interface FilteredEntry extends UnattemptedEntry {
  kind: 'filtered';
}

/** The event waits behind an earlier event of its user (docs/reference/ordering.md): no attempt yet. */
export interface WaitingEntry extends UnattemptedEntry {
  kind: 'waiting';
  /** The message id of the event it waits for. */
  waitingFor: string;
}

export interface DeadEntry {
  kind: 'dead';
  /** Where the dead letter is on the dead-letter topic: a replay reads just that record. */
  position: RecordPosition;
  sourceId: string;
  messageId: string;
  destinationId: string;
  eventType: string;
  reason: string;
  lastError?: string;
  at: number;
  receivedAt?: number;
}

export interface RejectedEntry {
  kind: 'rejected';
  position: RecordPosition;
  sourceId: string;
  messageId: string;
  code: string;
  message: string;
  origin: string;
  at: number;
  /** The rejected bytes as text (bounded), for the message page. */
  value?: string;
  /** The rejected body's `userId`, when it has one: a deletion request removes the body. */
  userId?: string;
}

/** A replay marker on the dead-letter topic: the dead letter at `position` was replayed at `at`. */
export interface ReplayMarkerEntry {
  kind: 'replay-marker';
  position: RecordPosition;
  at: number;
}

export type LogEntry = EventEntry | AttemptEntry | FilteredEntry | WaitingEntry | DeadEntry | RejectedEntry;
/** What a record says: a fact about a message, or a replay marker (kept in the dead-letter index only). */
export type ReadEntry = LogEntry | ReplayMarkerEntry;
export type Read = { ok: true; entry: ReadEntry } | { ok: false; reason: string };

export interface TopicRoles {
  events: string;
  attempts: string;
  deadLetter: string;
  rejected: string;
}

const str = (v: unknown, max = MAX_ID_LENGTH): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** An integer the database's `integer` holds. */
const int = (v: unknown): v is number => Number.isSafeInteger(v) && Math.abs(v as number) < 2 ** 31;
const clip = (s: string, max = MAX_TEXT_LENGTH) => (s.length > max ? s.slice(0, max) : s);

function json(value: Buffer | null): unknown {
  if (value === null || value.length === 0) return undefined;
  try {
    return JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Latest time kept (9999-12-31T23:59:59.999Z): JavaScript reads years PostgreSQL's timestamps refuse. */
const LATEST = 253_402_300_799_999;

/** Epoch ms of an ISO time between 1970 and 9999 (the database keeps nothing else), else undefined. */
const time = (iso: unknown): number | undefined => {
  if (typeof iso !== 'string') return undefined;
  const ms = Date.parse(iso);
  return ms >= 0 && ms <= LATEST ? ms : undefined;
};

/** The record's time, within what the database keeps. */
const recordTime = (record: ConsumedRecord): number => Math.min(Math.max(record.timestamp, 0), LATEST) || 0;

function readEvent(record: ConsumedRecord): Read {
  const event = json(record.value);
  if (!isJsonObject(event) || !str(event.sourceId) || !str(event.messageId))
    return { ok: false, reason: 'not an event envelope' };
  const entry: EventEntry = {
    kind: 'event',
    sourceId: event.sourceId,
    messageId: event.messageId,
    eventType: str(event.type, 32) ? event.type : 'unknown',
    receivedAt: time(event.receivedAt) ?? recordTime(record),
    event: record.value!.toString('utf8'),
    envelope: event,
    destinationIds: [],
  };
  if (str(event.userId)) entry.userId = event.userId;
  const trace = traceHeadersOf(record.headers);
  if (trace !== undefined) entry.traceId = traceIdOf(trace);
  return { ok: true, entry };
}

function readAttempt(record: ConsumedRecord, position: RecordPosition): Read {
  const a = json(record.value) as Partial<AttemptEvent> | undefined;
  if (!isJsonObject(a)) return { ok: false, reason: 'attempt record is not JSON' };
  const at = time(a.at);
  if (a.outcome === 'filtered' || a.outcome === 'waiting') return readNoRequest(a.outcome, a, at, position);
  const outcomes = ['success', 'retryable', 'permanent'];
  if (
    !str(a.messageId) ||
    !str(a.sourceId) ||
    !str(a.destinationId) ||
    !str(a.endpoint, MAX_TEXT_LENGTH) ||
    !int(a.attempt) ||
    !num(a.latencyMs) ||
    at === undefined ||
    !outcomes.includes(a.outcome as string)
  ) {
    return { ok: false, reason: 'attempt record misses a field' };
  }
  const entry: AttemptEntry = {
    kind: 'attempt',
    position,
    sourceId: a.sourceId,
    messageId: a.messageId,
    destinationId: a.destinationId,
    eventType: str(a.eventType, 32) ? a.eventType : 'unknown',
    endpoint: a.endpoint,
    attempt: a.attempt,
    outcome: a.outcome as AttemptEntry['outcome'],
    latencyMs: a.latencyMs,
    at,
  };
  if (int(a.status)) entry.status = a.status;
  if (typeof a.error === 'string') entry.error = clip(a.error);
  if (typeof a.responseSnippet === 'string') entry.responseSnippet = clip(a.responseSnippet);
  // A batch id is an id like the others (clipped, kept storable), but an attempt without a usable
  // one is still the event's attempt: only its batch is not named.
  if (typeof a.batchId === 'string' && a.batchId.length > 0) {
    entry.batchId = clip(a.batchId, MAX_ID_LENGTH);
    if (int(a.batchSize) && a.batchSize > 0) entry.batchSize = a.batchSize;
  }
  return { ok: true, entry };
}

/**
 * A record of a destination that made no request (`filtered`, or `waiting` behind its user's head
 * on an ordered destination): no endpoint, no attempt number.
 */
function readNoRequest(
  kind: 'filtered' | 'waiting',
  a: Partial<AttemptEvent>,
  at: number | undefined,
  position: RecordPosition,
): Read {
  if (!str(a.messageId) || !str(a.sourceId) || !str(a.destinationId) || at === undefined)
    return { ok: false, reason: `${kind} record misses a field` };
  const common = {
    position,
    sourceId: a.sourceId,
    messageId: a.messageId,
    destinationId: a.destinationId,
    eventType: str(a.eventType, 32) ? a.eventType : 'unknown',
    at,
  };
  if (kind === 'filtered') return { ok: true, entry: { kind, ...common } };
  const waitingFor = typeof a.waitingFor === 'string' ? clip(a.waitingFor, MAX_ID_LENGTH) : '';
  return { ok: true, entry: { kind, ...common, waitingFor } };
}

/** `<partition>:<offset>` of a replay marker's `sluice-replay-of` header. */
const MARKER_OF = /^(\d{1,9}):(\d{1,19})$/;

function readDead(record: ConsumedRecord, position: RecordPosition): Read {
  const of = headerText(record.headers, REPLAY_HEADERS.replayOf);
  if (of !== undefined) {
    const m = MARKER_OF.exec(of);
    const at = Number(headerText(record.headers, REPLAY_HEADERS.replayedAt));
    if (!m) return { ok: false, reason: 'replay marker names no dead letter' };
    return {
      ok: true,
      entry: {
        kind: 'replay-marker',
        position: { topic: record.topic, partition: Number(m[1]), offset: m[2]! },
        at: Number.isFinite(at) && at > 0 ? at : record.timestamp,
      },
    };
  }
  if (record.value === null || headerText(record.headers, RETRY_HEADERS.messageId) === undefined)
    return { ok: false, reason: 'not a dead letter' };
  try {
    const s = retryStateFromHeaders(record.headers);
    const entry: DeadEntry = {
      kind: 'dead',
      position,
      sourceId: s.sourceId,
      messageId: s.messageId,
      destinationId: s.destinationId,
      eventType: s.eventType,
      reason: s.deadReason ?? 'unknown',
      at: s.deadAt !== undefined && s.deadAt >= 0 && s.deadAt <= LATEST ? s.deadAt : recordTime(record),
    };
    if (s.lastError !== undefined) entry.lastError = clip(s.lastError);
    const received = time(s.receivedAt);
    if (received !== undefined) entry.receivedAt = received;
    return { ok: true, entry };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

function readRejected(record: ConsumedRecord, position: RecordPosition): Read {
  const body = json(record.value);
  const fromBody = isJsonObject(body) && str(body.messageId) ? body.messageId : undefined;
  const entry: RejectedEntry = {
    kind: 'rejected',
    position,
    sourceId: clip(
      headerText(record.headers, REJECT_HEADERS.sourceId) ??
        (isJsonObject(body) && str(body.sourceId) ? body.sourceId : ''),
      MAX_ID_LENGTH,
    ),
    // A rejected call without a usable messageId is still kept, under its place in the topic.
    messageId: fromBody ?? `rejected:${position.topic}/${position.partition}/${position.offset}`,
    code: clip(headerText(record.headers, REJECT_HEADERS.code) ?? 'unknown', MAX_ID_LENGTH),
    message: clip(headerText(record.headers, REJECT_HEADERS.message) ?? ''),
    origin: clip(headerText(record.headers, REJECT_HEADERS.origin) ?? 'unknown', MAX_ID_LENGTH),
    at: recordTime(record),
  };
  if (record.value !== null) entry.value = clip(record.value.toString('utf8'));
  if (isJsonObject(body) && str(body.userId)) entry.userId = body.userId;
  return { ok: true, entry };
}

/**
 * The ingestion lane of an entry, out of `lanes`: a hash of its source and message id, so every
 * record about one message is written by the same lane, one transaction after the other.
 */
export function laneOf(entry: LogEntry, lanes: number): number {
  let h = 0x811c9dc5;
  for (const s of [entry.sourceId, entry.messageId]) {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0, 0x01000193);
  }
  return (h >>> 0) % lanes;
}

/** What one record of the four topics says, or why it says nothing the log keeps. Never throws. */
export function readRecord(record: ConsumedRecord, topics: TopicRoles): Read {
  const position = { topic: record.topic, partition: record.partition, offset: record.offset };
  let read: Read;
  if (record.topic === topics.events) read = readEvent(record);
  else if (record.topic === topics.attempts) read = readAttempt(record, position);
  else if (record.topic === topics.deadLetter) read = readDead(record, position);
  else if (record.topic === topics.rejected) read = readRejected(record, position);
  else return { ok: false, reason: `unexpected topic ${record.topic}` };
  if (read.ok) storable(read.entry);
  return read;
}

/** Makes every text of the entry one the database can keep (storable-text.ts). */
function storable(entry: ReadEntry): void {
  const fields = entry as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    fields[name] = name === 'event' ? storableJson(value) : storableText(value);
  }
}
