import { Agent, request } from 'undici';
import type { HttpRequest, HttpResponse, HttpTransport } from './http-transport.ts';

const KEPT_BODY_BYTES = 1024;

export interface UndiciTransportOptions {
  /** Connections kept per origin. Default: 4 (the client passes its `maxInFlight`). */
  connections?: number;
}

/** The default transport: undici with a private keep-alive connection pool. */
export function createUndiciTransport(options: UndiciTransportOptions = {}): HttpTransport {
  const agent = new Agent({ connections: options.connections ?? 4, keepAliveTimeout: 10_000 });
  return {
    async send(req: HttpRequest): Promise<HttpResponse> {
      const res = await request(req.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: agent,
        // One deadline for the whole attempt: connect, headers and body.
        signal: AbortSignal.timeout(req.timeoutMs),
      });
      const retryAfter = res.headers['retry-after'];
      return {
        status: res.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        body: await readStart(res.body),
      };
    },
    close: () => agent.close(),
  };
}

/** Reads the whole body (so the connection can be reused) but keeps only its start. */
async function readStart(body: AsyncIterable<Buffer>): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  for await (const chunk of body) {
    if (keptBytes < KEPT_BODY_BYTES) {
      kept.push(chunk);
      keptBytes += chunk.length;
    }
  }
  return Buffer.concat(kept).subarray(0, KEPT_BODY_BYTES).toString('utf8');
}
