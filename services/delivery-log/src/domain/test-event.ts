import { envelopeProblem } from '@sluice/codec';
import { type EventEnvelope, isJsonObject, type JsonObject } from '@sluice/envelope';
import type { Checked } from './query.ts';

/** What a test of a destination asks for: the body of `POST …/destination-definitions/{id}/test`. */
export interface TestRequest {
  /** Index into the destination's endpoints; default 0. */
  endpoint: number;
  /** The call to send; absent: the sample event (`sampleTestEvent`). */
  event?: JsonObject;
}

/** The sample event's name and user (docs/reference/runtime-destinations.md, "Test event"). */
export const TEST_EVENT_NAME = 'Sluice Test Event';
export const TEST_USER_ID = 'sluice-test';
/** What a test event's fresh `messageId` starts with, so that a receiver can tell it from real traffic. */
export const TEST_MESSAGE_ID_PREFIX = 'sluice-test-';

/** The call a test sends when the request gives none: a `track` of `Sluice Test Event`. */
export function sampleTestEvent(): JsonObject {
  return { type: 'track', event: TEST_EVENT_NAME, userId: TEST_USER_ID, properties: { test: true } };
}

const FIELDS = new Set(['endpoint', 'event']);
const invalid = (field: string, message: string): Checked<never> => ({ ok: false, field, message });

/** The body of a test: nothing, or a JSON object with `endpoint` (an index) and `event` (a call), both optional. */
export function parseTestRequest(body: unknown): Checked<TestRequest> {
  if (body === undefined) return { ok: true, value: { endpoint: 0 } };
  if (!isJsonObject(body)) return invalid('body', 'must be a JSON object');
  const unknown = Object.keys(body).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return invalid(unknown, 'is not a field of this route');
  const { endpoint = 0, event } = body;
  if (!Number.isSafeInteger(endpoint) || (endpoint as number) < 0)
    return invalid('endpoint', 'must be an index into the destination endpoints (0, 1, …)');
  if (event !== undefined && !isJsonObject(event)) return invalid('event', 'must be a JSON object (a call)');
  return { ok: true, value: { endpoint: endpoint as number, ...(event !== undefined && { event }) } };
}

/** What the test event is made of: the call, the source it is said to come from, the clock and a fresh id. */
export interface TestEventInput {
  call: JsonObject | undefined;
  sourceId: string;
  nowMs: number;
  /** Used unless the call gives its own `messageId`. */
  messageId: string;
}

/**
 * The test event as the deliverer would read it from `sluice.events`: the call (or the sample) with
 * a `sourceId`, `messageId`, `timestamp` and `receivedAt` where it gives none, checked as every
 * envelope is (`envelopeProblem`); one the deliverer could not send is a 400 on `event`.
 */
export function testEnvelope(input: TestEventInput): Checked<EventEnvelope> {
  const at = new Date(input.nowMs).toISOString();
  const envelope = {
    sourceId: input.sourceId,
    messageId: input.messageId,
    timestamp: at,
    receivedAt: at,
    ...(input.call ?? sampleTestEvent()),
  };
  const problem = envelopeProblem(envelope);
  if (problem !== undefined) return invalid('event', `is not an event the deliverer can send: ${problem}`);
  return { ok: true, value: envelope as EventEnvelope };
}
