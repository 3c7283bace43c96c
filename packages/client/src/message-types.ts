/** Free-form key/value data: traits, properties, context. */
export type Properties = Record<string, unknown>;

/** Per-destination switches (docs/reference/routing.md): `{ All: false, Webhooks: true }`. */
export type Integrations = Record<string, boolean | Properties>;

/** Options accepted by every call. */
export interface CallOptions {
  /** Turns destinations on or off for this call. Default: none given (every destination enabled). */
  integrations?: Integrations;
  /**
   * When the event happened, for historical import: a `Date` or an ISO 8601 string, sent as
   * UTC with milliseconds. Default: the time of the call.
   */
  timestamp?: Date | string;
  /** Extra context (ip, userAgent, app, device, ...). `context.library` is always set by the client. Default: `{}`. */
  context?: Properties;
  /** Default: a fresh UUID v4. Give your own to make a message de-duplicable across your own retries. */
  messageId?: string;
}

/** Who the call is about: at least one of the two is required (all calls but alias). */
export interface Identity {
  /** The user's id in your database. */
  userId?: string;
  /** An id for a user not (yet) known, e.g. a session id. */
  anonymousId?: string;
}

export interface IdentifyParams extends CallOptions, Identity {
  traits?: Properties;
}

export interface TrackParams extends CallOptions, Identity {
  /** Required: the name of the action, e.g. `"Order Completed"`. */
  event: string;
  properties?: Properties;
}

export interface PageParams extends CallOptions, Identity {
  name?: string;
  category?: string;
  /** Recognised keys: `url`, `title`, `referrer`, `path`; custom keys allowed. */
  properties?: Properties;
}

export interface ScreenParams extends CallOptions, Identity {
  name?: string;
  category?: string;
  properties?: Properties;
}

export interface GroupParams extends CallOptions, Identity {
  /** Required: the group's id. */
  groupId: string;
  traits?: Properties;
}

export interface AliasParams extends CallOptions {
  /** Required: the new id. */
  userId: string;
  /** Required: the id the user was known by until now. */
  previousId: string;
}

export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** One message exactly as it goes on the wire, inside `batch`. */
export interface WireMessage {
  type: MessageType;
  messageId: string;
  timestamp: string;
  userId?: string;
  anonymousId?: string;
  context: Properties & { library: { name: string; version: string } };
  integrations?: Integrations;
  event?: string;
  properties?: Properties;
  traits?: Properties;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
}
