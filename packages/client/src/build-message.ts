import { LIBRARY_NAME, LIBRARY_VERSION, MAX_MESSAGE_BYTES } from './constants.ts';
import { MessageTooLargeError, ValidationError } from './errors.ts';
import type {
  AliasParams,
  GroupParams,
  IdentifyParams,
  MessageType,
  PageParams,
  ScreenParams,
  TrackParams,
  WireMessage,
} from './message-types.ts';
import { formatIsoTime } from './iso-time.ts';
import { toIsoTimestamp } from './timestamp.ts';

export interface ParamsByType {
  identify: IdentifyParams;
  track: TrackParams;
  page: PageParams;
  screen: ScreenParams;
  group: GroupParams;
  alias: AliasParams;
}

/** What a call becomes: the message, its serialised form and that form's size in bytes. */
export interface BuiltMessage {
  message: WireMessage;
  json: string;
  bytes: number;
}

export interface BuildEnv {
  /** Milliseconds since the epoch; the default `timestamp`. */
  now: () => number;
  /** A fresh UUID v4; the default `messageId`. */
  uuid: () => string;
}

// Not frozen: JSON.stringify takes a much slower path for frozen objects.
const LIBRARY = { name: LIBRARY_NAME, version: LIBRARY_VERSION };

/**
 * Validates a call and builds its wire message (docs/reference/clients.md). Pure apart from `env`.
 * Throws `ValidationError` or `MessageTooLargeError`; nothing is queued then.
 */
export function buildMessage<T extends MessageType>(type: T, params: ParamsByType[T], env: BuildEnv): BuiltMessage {
  if (params === null || typeof params !== 'object') throw new ValidationError(`${type}: expected an object`);
  const p = params as Partial<IdentifyParams & TrackParams & PageParams & GroupParams & AliasParams>;

  const userId = optionalString(p.userId, 'userId', type);
  const anonymousId = optionalString(p.anonymousId, 'anonymousId', type);
  if (type === 'alias') {
    if (!userId) throw new ValidationError('alias: userId is required');
    requireString(p.previousId, 'previousId', type);
  } else if (!userId && !anonymousId) {
    throw new ValidationError(`${type}: userId or anonymousId is required`);
  }
  if (type === 'track') requireString(p.event, 'event', type);
  if (type === 'group') requireString(p.groupId, 'groupId', type);

  const message: WireMessage = {
    type,
    messageId: optionalString(p.messageId, 'messageId', type) || env.uuid(),
    timestamp: p.timestamp === undefined ? formatIsoTime(env.now()) : toIsoTimestamp(p.timestamp),
    userId,
    anonymousId,
    context: { ...optionalObject(p.context, 'context', type), library: LIBRARY },
    integrations: optionalObject(p.integrations, 'integrations', type) as WireMessage['integrations'],
  };
  // Only the fields that belong to the type, in a fixed order; undefined ones are not serialised.
  if (type === 'track') message.event = p.event;
  if (type === 'group') message.groupId = p.groupId;
  if (type === 'alias') message.previousId = p.previousId;
  if (type === 'identify' || type === 'group') message.traits = optionalObject(p.traits, 'traits', type);
  if (type === 'track' || type === 'page' || type === 'screen') {
    message.properties = optionalObject(p.properties, 'properties', type);
  }
  if (type === 'page' || type === 'screen') {
    message.name = optionalString(p.name, 'name', type);
    message.category = optionalString(p.category, 'category', type);
  }

  let json: string;
  try {
    json = JSON.stringify(message); // drops the undefined keys
  } catch (err) {
    throw new ValidationError(`${type}: message cannot be serialised as JSON (${(err as Error).message})`);
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES);
  return { message, json, bytes };
}

function optionalString(value: unknown, field: string, type: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`${type}: ${field} must be a string`);
  return value === '' ? undefined : value;
}

function requireString(value: unknown, field: string, type: string): void {
  if (typeof value !== 'string' || value === '') throw new ValidationError(`${type}: ${field} is required`);
}

function optionalObject(value: unknown, field: string, type: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(`${type}: ${field} must be an object`);
  }
  return value as Record<string, unknown>;
}
