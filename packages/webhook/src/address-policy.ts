import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

/** The SSRF guard's settings (`delivery.ssrf`). */
export interface AddressPolicySettings {
  /** Off: every address is allowed. */
  enabled: boolean;
  /** `delivery.ssrf.allowCidrs`: ranges allowed even where the rule refuses them. */
  allowCidrs: readonly string[];
}

export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

/**
 * Cloud metadata and host-agent addresses in public unicast space, which the range rule alone would
 * let through: Azure's WireServer, `168.63.129.16` (the VM agent's and DHCP/DNS/health-probe
 * endpoint, reachable from every Azure VM). The other metadata services are refused by their
 * ranges: `169.254.169.254` (AWS, GCP, Azure IMDS, Oracle, OpenStack…) and `169.254.0.23`
 * (Tencent) are link-local, `fd00:ec2::254` (AWS over IPv6) and `fd20:ce::254` (GCP over IPv6)
 * unique-local, `100.100.100.200` (Alibaba) carrier-grade NAT, `192.0.0.192` (Oracle, legacy)
 * reserved. Refused with the range `metadata`, unless an allow-listed CIDR covers the address.
 */
export const METADATA_ADDRESSES: readonly string[] = ['168.63.129.16'];
const METADATA = new Set(METADATA_ADDRESSES);

/**
 * The SSRF guard's rule for one IP address (docs/reference/security.md): only public unicast addresses may be
 * connected to, unless an allow-listed CIDR covers the address. Loopback, private, link-local
 * (cloud metadata), CGNAT, multicast, unspecified, reserved, the metadata addresses in public
 * space (`METADATA_ADDRESSES`) and every special IPv6 range —
 * including IPv4 embedded in 6to4/Teredo/NAT64 — are refused. IPv4-mapped IPv6 is judged as the
 * IPv4 address it carries.
 */
export class AddressPolicy {
  readonly #allow: Cidr[];

  readonly enabled: boolean;

  /** Throws on an unparsable `allowCidrs` entry. */
  constructor(settings: AddressPolicySettings) {
    this.enabled = settings.enabled;
    this.#allow = settings.allowCidrs.map((c) => normaliseCidr(ipaddr.parseCIDR(c)));
  }

  check(address: string): AddressVerdict {
    if (!this.enabled) return { allowed: true };
    let parsed: Address;
    try {
      parsed = unmap(ipaddr.parse(stripZone(address)));
    } catch {
      return { allowed: false, range: 'invalid' };
    }
    if (this.#allow.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match(net, bits)))
      return { allowed: true };
    if (METADATA.has(parsed.toNormalizedString())) return { allowed: false, range: 'metadata' };
    const range = parsed.range();
    return range === 'unicast' ? { allowed: true } : { allowed: false, range };
  }
}

function stripZone(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = bare.indexOf('%');
  return zone === -1 ? bare : bare.slice(0, zone);
}

function unmap(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

function normaliseCidr([net, bits]: Cidr): Cidr {
  if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(net as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [net, bits];
}

/**
 * What the policy can say of a URL before any name is resolved: its host when that is an IP
 * address (judged by `check`) or `localhost` (a name for loopback, `.localhost` included). A host
 * name is allowed here; the deliverer judges the addresses it resolves to on every connection.
 */
export function urlVerdict(policy: AddressPolicy, url: string): AddressVerdict {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return { allowed: false, range: 'invalid' };
  }
  if (!policy.enabled) return { allowed: true };
  if (host === 'localhost' || host.endsWith('.localhost')) return policy.check('127.0.0.1');
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) ? policy.check(bare) : { allowed: true };
}
