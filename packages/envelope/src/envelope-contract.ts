import type { JsonObject } from './envelope.ts';

/**
 * The one description of an event envelope's fields (docs/reference/envelope.md). The JSON
 * Schema (`envelope-schema.ts`) is generated from it, ingest checks every call against it before
 * it accepts the call, and every consumer checks what it reads against it (`envelopeProblem` in
 * `@sluice/codec`): what ingest accepts, the deliverer can route, render and sign.
 *
 * Kinds:
 * - `id`: a non-empty string.
 * - `nullableId`: a string or null.
 * - `messageId`: a non-empty string of visible ASCII, at most `ENVELOPE_LIMITS.messageIdMaxChars`
 *   (it travels as the `X-Message-Id` header).
 * - `eventType`: one of the event types.
 * - `timestamp`: a non-empty string (ISO 8601 once ingest normalised it).
 * - `string`, `object`: a JSON string, a JSON object (not an array, not null).
 */
export const ENVELOPE_FIELDS = {
  sourceId: 'id',
  type: 'eventType',
  messageId: 'messageId',
  timestamp: 'timestamp',
  userId: 'nullableId',
  anonymousId: 'nullableId',
  receivedAt: 'string',
  sentAt: 'string',
  originalTimestamp: 'string',
  context: 'object',
  integrations: 'object',
  event: 'string',
  properties: 'object',
  traits: 'object',
  name: 'string',
  category: 'string',
  groupId: 'string',
  previousId: 'string',
} as const;

export type EnvelopeFieldName = keyof typeof ENVELOPE_FIELDS;
export type EnvelopeFieldKind = (typeof ENVELOPE_FIELDS)[EnvelopeFieldName];

/** Fields every envelope has. */
export const REQUIRED_ENVELOPE_FIELDS = ['sourceId', 'type', 'messageId', 'timestamp'] as const;

/** Limits on any envelope, wherever it was written (docs/reference/limits.md). */
export const ENVELOPE_LIMITS = {
  /**
   * Deepest nesting of objects and arrays, the envelope itself being level 1. Far beyond what
   * real clients send (a few levels), low enough that no recursive reader or writer downstream
   * (JSON.stringify, schema validators) runs out of stack.
   */
  maxDepth: 64,
  /** Longest `messageId`, in characters (a UUID is 36). */
  messageIdMaxChars: 128,
} as const;

/** What a `messageId` must be: visible ASCII (0x21–0x7E), 1 to `messageIdMaxChars` characters. */
export function isDeliverableMessageId(value: string): boolean {
  if (value.length === 0 || value.length > ENVELOPE_LIMITS.messageIdMaxChars) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

export const MESSAGE_ID_RULE = `1 to ${ENVELOPE_LIMITS.messageIdMaxChars} visible ASCII characters (0x21–0x7E)`;

/** Why a JSON value nested in an envelope (or a call) cannot be delivered. */
export type NestingProblem = { code: 'too_deep' | 'number_out_of_range'; message: string };

/**
 * Walks a parsed JSON value without recursion (a hostile value cannot exhaust the stack) and
 * reports the first container nested deeper than `maxDepth` (the value itself is level 1) or the
 * first number JSON.parse could not represent (a literal beyond ±1.8e308 reads as Infinity and
 * would be written back as `null`). The work is bounded by the number of values, and stops at
 * the first container past the limit.
 */
export function nestingProblem(
  value: unknown,
  maxDepth: number = ENVELOPE_LIMITS.maxDepth,
): NestingProblem | undefined {
  if (typeof value !== 'object' || value === null) return numberProblem(value);
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const problem = visit(container[i], depth, maxDepth, containers, depths);
        if (problem) return problem;
      }
    } else {
      for (const key in container) {
        const problem = visit((container as JsonObject)[key], depth, maxDepth, containers, depths);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}

function visit(
  child: unknown,
  depth: number,
  maxDepth: number,
  containers: object[],
  depths: number[],
): NestingProblem | undefined {
  if (typeof child === 'object' && child !== null) {
    if (depth + 1 > maxDepth)
      return { code: 'too_deep', message: `objects and arrays are nested deeper than ${maxDepth} levels` };
    containers.push(child);
    depths.push(depth + 1);
    return undefined;
  }
  return numberProblem(child);
}

function numberProblem(value: unknown): NestingProblem | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return { code: 'number_out_of_range', message: 'a number is beyond the range of a 64-bit float (±1.8e308)' };
  }
  return undefined;
}

/**
 * The envelope rules a JSON Schema does not express (the Schema covers field kinds and required
 * fields): the `messageId` form and the nesting limit. A reason, or undefined.
 */
export function envelopeContractProblem(envelope: JsonObject): string | undefined {
  const { messageId } = envelope;
  if (typeof messageId === 'string' && !isDeliverableMessageId(messageId))
    return `/messageId must be ${MESSAGE_ID_RULE}`;
  return nestingProblem(envelope)?.message;
}
