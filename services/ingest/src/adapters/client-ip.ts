import type { IncomingMessage } from 'node:http';

/**
 * `context.ip` (docs/reference/tracking-api.md): the first `X-Forwarded-For` hop when the proxy is trusted, else the
 * socket.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim();
    if (first) return first;
  }
  const address = req.socket.remoteAddress;
  return address?.startsWith('::ffff:') ? address.slice(7) : address;
}
