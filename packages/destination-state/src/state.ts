/** The runtime states of a destination or an endpoint (docs/reference/destination-states.md). */
export const DESTINATION_STATES = ['active', 'paused', 'disabled'] as const;
export type DestinationStateName = (typeof DESTINATION_STATES)[number];

/** The value of one key of `sluice.destination-state`, as written. */
export interface DestinationStateValue {
  state: DestinationStateName;
  reason: string;
  /** Who set it: a person, a token's name, `api`, or `sluice` for automatic changes. */
  by: string;
  /** When it was set, ISO 8601. */
  at: string;
  /** Set by Sluice itself (auto-disable), not by an operator. */
  auto?: true;
}

/** What a destination or an endpoint is right now, its own state and its destination's combined. */
export interface EffectiveState {
  state: DestinationStateName;
  reason?: string;
  by?: string;
  /** When the state in force was set (ISO 8601); absent for a destination never paused. */
  since?: string;
  auto?: boolean;
}

/** Longest `reason` and `by` kept: a state record stays small, whatever an API caller sends. */
export const MAX_REASON_CHARS = 1_000;
export const MAX_BY_CHARS = 200;

/** The key of a destination's state, or of one of its endpoints' (destination ids never contain `/`). */
export function stateKey(destinationId: string, endpointRef?: string): string {
  return endpointRef === undefined ? destinationId : `${destinationId}/${endpointRef}`;
}

/** The destination and endpoint a key names (an endpoint ref may contain `/`; an id never does). */
export function parseStateKey(key: string): { destinationId: string; endpointRef?: string } {
  const slash = key.indexOf('/');
  if (slash < 0) return { destinationId: key };
  return { destinationId: key.slice(0, slash), endpointRef: key.slice(slash + 1) };
}

/** Why a value is not a state record, or undefined when it is one. */
export function invalidStateValue(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  if (!DESTINATION_STATES.includes(v.state as DestinationStateName))
    return `state must be one of ${DESTINATION_STATES.join(', ')}`;
  if (typeof v.reason !== 'string' || v.reason.length > MAX_REASON_CHARS)
    return `reason must be a string of at most ${MAX_REASON_CHARS} characters`;
  if (typeof v.by !== 'string' || v.by.length === 0 || v.by.length > MAX_BY_CHARS)
    return `by must be a non-empty string of at most ${MAX_BY_CHARS} characters`;
  if (typeof v.at !== 'string' || Number.isNaN(Date.parse(v.at))) return 'at must be an ISO 8601 time';
  if (v.auto !== undefined && v.auto !== true) return 'auto must be true or absent';
  return undefined;
}

/** Parses a record's value; undefined (with why) for anything that is not a state record. */
export function parseStateValue(
  raw: string,
): { ok: true; value: DestinationStateValue } | { ok: false; message: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, message: 'not JSON' };
  }
  const invalid = invalidStateValue(parsed);
  if (invalid !== undefined) return { ok: false, message: invalid };
  const v = parsed as DestinationStateValue;
  const value: DestinationStateValue = { state: v.state, reason: v.reason, by: v.by, at: v.at };
  if (v.auto === true) value.auto = true;
  return { ok: true, value };
}
