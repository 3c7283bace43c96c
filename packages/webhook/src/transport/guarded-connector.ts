import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP, type Socket } from 'node:net';
import { buildConnector } from 'undici';
import { SsrfBlockedError } from '../errors.ts';
import type { AddressPolicy } from '../address-policy.ts';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (
  hostname: string,
  options: LookupOneOptions | LookupAllOptions,
  callback: LookupCallback,
) => void;

export interface GuardedConnectorOptions {
  /** The policy in force; read on every connection so config reloads apply. */
  policy: () => AddressPolicy;
  /** TLS and socket options for `buildConnector` (CA bundle, connect timeout). */
  connect: buildConnector.BuildOptions;
  /** Injected in tests to simulate DNS answers; default `dns.lookup`. */
  lookup?: LookupFunction;
}

/**
 * An undici connector that enforces the SSRF guard on the address actually connected to
 * (docs/reference/security.md): an IP-literal host is checked before connecting, a hostname is checked inside the
 * socket's DNS lookup (only allowed resolved addresses are offered to the socket, so DNS rebinding cannot slip a
 * private one in),
 * and the connected socket's peer address is checked once more before any byte is written.
 */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const resolve = options.lookup ?? (dnsLookup as unknown as LookupFunction);
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, lookupOptions, (err, address, family) => {
      if (err) return callback(err, address, family);
      const policy = options.policy();
      if (Array.isArray(address)) {
        // Only addresses the guard allows are offered to the socket; none left → refused.
        const allowed = address.filter((a) => policy.check(a.address).allowed);
        if (allowed.length > 0) return callback(null, allowed, family);
        const first = address[0];
        const verdict = first ? policy.check(first.address) : { allowed: false as const, range: 'none' };
        const range = verdict.allowed ? 'none' : verdict.range;
        return callback(
          new SsrfBlockedError(first?.address ?? hostname, range) as NodeJS.ErrnoException,
          address,
          family,
        );
      }
      const verdict = policy.check(address);
      if (!verdict.allowed)
        return callback(new SsrfBlockedError(address, verdict.range) as NodeJS.ErrnoException, address, family);
      callback(null, address, family);
    });
  };
  const base = buildConnector({ ...options.connect, lookup: checkedLookup } as buildConnector.BuildOptions);

  return (connectOptions, callback) => {
    const { hostname } = connectOptions;
    if (isIP(hostname)) {
      const verdict = options.policy().check(hostname);
      if (!verdict.allowed) {
        queueMicrotask(() => callback(new SsrfBlockedError(hostname, verdict.range), null));
        return;
      }
    }
    base(connectOptions, (err, socket) => {
      if (err || !socket) return callback(err, null);
      const peer = (socket as Socket).remoteAddress;
      const verdict = peer ? options.policy().check(peer) : { allowed: false as const, range: 'unknown' };
      if (!verdict.allowed) {
        socket.destroy();
        return callback(new SsrfBlockedError(peer ?? 'unknown', verdict.range), null);
      }
      callback(null, socket);
    });
  };
}

/** What every webhook connection is made with: the SSRF policy in force, the CA bundle, a DNS stand-in for tests. */
export interface WebhookConnectorSettings {
  /** The policy in force; read on every connection so config reloads apply. */
  policy: () => AddressPolicy;
  /** Certificates trusted (`caBundle` of `delivery.caFile`); absent: the system roots. */
  ca?: string[];
  /** Injected in tests to simulate DNS answers; default `dns.lookup`. */
  lookup?: LookupFunction;
}

/** The connector of every webhook request: TLS always verified (against `ca` when given), the SSRF guard inside. */
export function webhookConnector(settings: WebhookConnectorSettings): buildConnector.connector {
  const { policy, ca, lookup } = settings;
  return guardedConnector({
    policy,
    connect: { rejectUnauthorized: true, ...(ca && { ca }) },
    ...(lookup && { lookup }),
  });
}
