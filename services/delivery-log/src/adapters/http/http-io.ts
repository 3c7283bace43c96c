import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '../../constants.ts';
import { checkId, type Invalid } from '../../domain/query.ts';

/** What the API's routes share: their shape, the error they throw, and how they read bodies and path ids. */
export type Route = {
  method: string;
  pattern: RegExp;
  name: string;
  /** The query parameters it takes; any other is a 400. */
  params: readonly string[];
  run: (m: RegExpExecArray, url: URL, req: IncomingMessage) => Promise<RouteAnswer>;
};

/** A route's answer: its status, its body, and headers of its own (an `etag`). */
export type RouteAnswer = [number, unknown] | [number, unknown, Record<string, string>];

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  /** Headers of the answer besides the body's (`retry-after`). */
  readonly headers: Record<string, string> = {};
  constructor(status: number, code: string, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

export const badRequest = (c: Invalid) => new HttpError(400, 'invalid_parameter', `${c.field} ${c.message}`, c.field);

export function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, 'body_too_large', `the body may be at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  // application/merge-patch+json: what a JSON Merge Patch (RFC 7386) is sent as.
  if (!/^application\/(merge-patch\+)?json\b/i.test(type))
    throw new HttpError(415, 'unsupported_media_type', 'the body must be application/json');
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'invalid_json', 'the body is not JSON');
  }
}

/** A path segment as an id: percent-decoded (any character an id may hold), then checked. */
export function pathId(field: string, raw: string, maxLength?: number): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, 'invalid_parameter', `${field} is not valid percent-encoding`, field);
  }
  const c = checkId(field, value, maxLength);
  if (!c.ok) throw badRequest(c);
  return c.value!;
}
