import type { IncomingMessage } from 'node:http';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import { BodyTooLargeError, MalformedGzipError, UnsupportedMediaTypeError } from '../errors.ts';

/** Content types ingest reads as JSON; a missing one is accepted too (old clients) [decision]. */
const JSON_TYPES = /^(application\/json|application\/[\w.+-]*\+json|text\/plain)\s*(;|$)/i;

/** Throws 415 for a content type or encoding ingest does not read (docs/reference/tracking-api.md). */
export function checkContentType(req: IncomingMessage): void {
  const type = req.headers['content-type'];
  if (type !== undefined && type !== '' && !JSON_TYPES.test(type))
    throw new UnsupportedMediaTypeError(`content type ${type} is not supported; send application/json`);
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (!['identity', 'gzip', 'x-gzip', 'deflate', ''].includes(encoding))
    throw new UnsupportedMediaTypeError(`content encoding ${encoding} is not supported`);
}

/**
 * Reads a request body, inflating gzip/deflate on the fly, and stops as soon as the
 * decompressed size passes `limit` (docs/reference/security.md): a gzip bomb costs at most `limit` plus one zlib
 * chunk of memory, never its inflated size. On failure the rest of the upload is discarded
 * unread so the error response can still reach the client.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  const declared = Number(req.headers['content-length']);
  const compressed = encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate';
  if (!compressed && Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const inflater: Gunzip | Inflate | undefined = compressed
      ? encoding === 'deflate'
        ? createInflate()
        : createGunzip()
      : undefined;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      if (inflater) {
        req.unpipe(inflater);
        inflater.destroy();
      }
      req.resume();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) return fail(new BodyTooLargeError(limit));
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    req.on('error', (err) => fail(err));
    req.on('aborted', () => fail(new Error('request aborted')));
    if (inflater) {
      inflater.on('data', onData);
      inflater.on('end', onEnd);
      inflater.on('error', (err) => fail(new MalformedGzipError(err.message)));
      // Compressed input larger than the limit cannot inflate to less than it (beyond headers).
      let raw = 0;
      req.on('data', (chunk: Buffer) => {
        raw += chunk.length;
        if (raw > limit + 1024) fail(new BodyTooLargeError(limit));
      });
      req.pipe(inflater);
    } else {
      req.on('data', onData);
      req.on('end', onEnd);
    }
  });
}
