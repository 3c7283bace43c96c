import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import type { KafkaOidc } from '@sluice/config';

/** What kafkajs's `oauthBearerProvider` returns. */
export interface BearerToken {
  value: string;
}

/** Raised when no token can be had; the connection check reports it as the failure's cause. */
export class OAuthTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthTokenError';
  }
}

/**
 * A token kept in a file by something else (a sidecar, a Kubernetes projected volume): read at
 * every authentication, so a rotated token is picked up by the next connection.
 */
export function tokenFileProvider(path: string): () => Promise<BearerToken> {
  return async () => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new OAuthTokenError(`cannot read kafka.sasl.tokenFile ${path}: ${(err as Error).message}`);
    }
    const value = text.trim();
    if (value === '') throw new OAuthTokenError(`kafka.sasl.tokenFile ${path} is empty`);
    return { value };
  };
}

/** Fraction of a token's lifetime after which a new one is fetched. */
const REFRESH_AT = 0.8;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * OIDC client credentials grant (RFC 6749 §4.4, client authentication `client_secret_basic`).
 * The token is reused until 80 % of its `expires_in` has passed; concurrent authentications
 * share one request.
 */
export function oidcTokenProvider(oidc: KafkaOidc, now: () => number = Date.now): () => Promise<BearerToken> {
  const dispatcher = new Agent({
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
    connect: {
      timeout: REQUEST_TIMEOUT_MS,
      ...(oidc.caFile && { ca: readPem(oidc.caFile, 'kafka.sasl.oidc.caFile') }),
    },
  });
  let cached: { value: string; refreshAt: number } | undefined;
  let pending: Promise<BearerToken> | undefined;
  const fetchToken = async (): Promise<BearerToken> => {
    const credentials = `${encodeURIComponent(oidc.clientId)}:${encodeURIComponent(oidc.clientSecret)}`;
    const form = new URLSearchParams({ grant_type: 'client_credentials', ...(oidc.scope && { scope: oidc.scope }) });
    const started = now();
    let status: number;
    let text: string;
    try {
      const res = await request(oidc.tokenEndpoint, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
        },
        body: form.toString(),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw new OAuthTokenError(`token endpoint ${oidc.tokenEndpoint} unreachable: ${(err as Error).message}`);
    }
    if (status !== 200)
      throw new OAuthTokenError(`token endpoint ${oidc.tokenEndpoint} answered ${status}: ${text.slice(0, 200)}`);
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new OAuthTokenError(`token endpoint ${oidc.tokenEndpoint} answered with something other than JSON`);
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new OAuthTokenError(`token endpoint ${oidc.tokenEndpoint} answered without an access_token`);
    }
    const lifetimeMs = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 0;
    cached = { value: body.access_token, refreshAt: started + lifetimeMs * REFRESH_AT };
    return { value: body.access_token };
  };
  return async () => {
    if (cached && now() < cached.refreshAt) return { value: cached.value };
    pending ??= fetchToken().finally(() => (pending = undefined));
    return pending;
  };
}

/** Reads a PEM file named by a config field, with an error naming both. */
export function readPem(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`${field}: cannot read ${path}: ${(err as Error).message}`);
  }
}
