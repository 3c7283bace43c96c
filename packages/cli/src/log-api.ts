import type { AnswerGuard } from '@sluice/log-api';
import { CliError, type CliIo } from './io.ts';

/** The delivery log's API base URL and bearer token, from the environment. */
export const API_URL_ENV = 'SLUICE_API_URL';
export const API_TOKEN_ENV = 'SLUICE_API_TOKEN';
/** One request to the delivery log's API: a change names the version it was made on (`ifMatch`, an ETag). */
export interface LogApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  ifMatch?: string;
}

/** A call to the delivery log's API (`SLUICE_API_URL`, `SLUICE_API_TOKEN`); a non-2xx answer is a `CliError` with its message. */
export async function logApi(io: CliIo, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  return (await logApiCall(io, { method, path, body })).body;
}

/** A call to the delivery log's API, answered with its body and its ETag (null without one). */
export async function logApiCall(io: CliIo, request: LogApiRequest): Promise<{ body: unknown; etag: string | null }> {
  const { method, path, body, ifMatch } = request;
  const base = io.env[API_URL_ENV];
  const token = io.env[API_TOKEN_ENV];
  if (!base) throw new CliError(`${API_URL_ENV} is not set (the delivery log's URL, e.g. http://localhost:8084)`, 2);
  if (!token) throw new CliError(`${API_TOKEN_ENV} is not set (deliveryLog.adminToken of the config)`, 2);
  const url = `${base.replace(/\/+$/, '')}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(ifMatch !== undefined && { 'if-match': ifMatch }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    const cause =
      (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    throw new CliError(`cannot reach ${url}: ${cause}`);
  }
  const text = await res.text();
  let parsed: { message?: string } | undefined;
  try {
    parsed = JSON.parse(text) as { message?: string } | undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) throw new CliError(`${method} ${path}: ${res.status} ${parsed?.message ?? text.trim()}`);
  return { body: parsed, etag: res.headers.get('etag') };
}

/**
 * A GET of the delivery log's API whose answer is checked against its type (`@sluice/log-api`)
 * before it is read (`logApiCheckedCall`).
 */
export async function logApiAnswer<T>(io: CliIo, path: string, guard: AnswerGuard<T>): Promise<T> {
  return logApiCheckedCall(io, { method: 'GET', path }, guard);
}

/**
 * A call of the delivery log's API whose answer is checked against its type (`@sluice/log-api`)
 * before it is read: an answer of another shape (another service at `SLUICE_API_URL`, or a delivery
 * log of another version) is a `CliError` naming the field, rather than a crash or a wrong figure.
 */
export async function logApiCheckedCall<T>(io: CliIo, request: LogApiRequest, guard: AnswerGuard<T>): Promise<T> {
  const { body } = await logApiCall(io, request);
  if (guard.is(body)) return body;
  throw new CliError(
    `${request.method} ${request.path}: the answer is not what the delivery log's API describes (at ${guard.mismatch(body)}): is ${API_URL_ENV} the delivery log's URL, and of this version?`,
  );
}

/**
 * The ETag of the version a change is made on: the one given (`--if-match`), else the current one,
 * read now from `path`. One the config file declares has none: the change is refused here, naming `id`.
 */
export async function etagToChange(io: CliIo, target: { path: string; id: string; ifMatch?: string }): Promise<string> {
  if (target.ifMatch !== undefined) return target.ifMatch;
  const { etag } = await logApiCall(io, { method: 'GET', path: target.path });
  if (etag === null) throw new CliError(`${target.id} is declared in the config file: change it there`);
  return etag;
}
