import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** Whether an address (of the connection, or a hop of `X-Forwarded-For`) is a trusted proxy. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The trust of `deliveryLog.trustedProxies` (docs/reference/tokens.md, "Behind a proxy"), compiled
 * once per list: the config is read per request and replaced whole on a reload, so the list's
 * identity tells when to compile again.
 */
export function proxyTrust(): (trustedProxies: readonly string[]) => ProxyTrust {
  let compiled: { list: readonly string[]; trust: ProxyTrust } | undefined;
  return (list) => {
    if (compiled?.list !== list) compiled = { list, trust: proxyaddr.compile([...list]) };
    return compiled.trust;
  };
}

/**
 * The client a request's failed authentications count against: the connection's address, unless it
 * is a trusted proxy; then the right-most address of `X-Forwarded-For` that is not one (every hop
 * left of it is the client's own word). From an untrusted connection the header is never read.
 */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string {
  return proxyaddr(req, trust) ?? 'unknown';
}
