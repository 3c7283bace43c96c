import ipaddr from 'ipaddr.js';
import { redactUrl } from '@sluice/logging';
import { LIMITS } from './constants.ts';
import { ConfigError } from './errors.ts';
import { headerNameProblem, headerValueProblem } from './header-rules.ts';
import type { RawConfig } from './schema.ts';

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(field, `must be a full http or https URL, got ${JSON.stringify(redactUrl(value))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(field, `must use http or https, got ${url.protocol}`);
  }
}

function checkHeaders(field: string, headers: Record<string, string>): void {
  const names = Object.keys(headers);
  if (names.length > LIMITS.headersPerEndpoint) {
    throw new ConfigError(field, `at most ${LIMITS.headersPerEndpoint} headers, got ${names.length}`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    const problem = headerNameProblem(name) ?? headerValueProblem(headers[name]!);
    if (problem) throw new ConfigError(`${field}.${name}`, problem);
    if (seen.has(name.toLowerCase()))
      throw new ConfigError(`${field}.${name}`, 'header name repeated (names are case-insensitive)');
    seen.add(name.toLowerCase());
  }
}

function checkUnique(field: string, ids: string[]): void {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw new ConfigError(`${field}[${i}].id`, `duplicate id ${JSON.stringify(id)}`);
    seen.add(id);
  });
}

/** Rules the JSON Schema cannot express (docs/configuration.md). Throws the first `ConfigError` found. */
export function checkSemantics(raw: RawConfig): void {
  checkUnique(
    'sources',
    raw.sources.map((s) => s.id),
  );
  checkUnique(
    'destinations',
    raw.destinations.map((d) => d.id),
  );
  const sourceIds = new Set(raw.sources.map((s) => s.id));
  raw.destinations.forEach((dest, d) => {
    const base = `destinations[${d}]`;
    dest.sourceIds.forEach((id, i) => {
      if (!sourceIds.has(id)) throw new ConfigError(`${base}.sourceIds[${i}]`, `unknown source ${JSON.stringify(id)}`);
    });
    const { webhooks, webhookUrl } = dest.settings;
    if (webhookUrl !== undefined) checkUrl(`${base}.settings.webhookUrl`, webhookUrl);
    webhooks.forEach((hook, i) => {
      checkUrl(`${base}.settings.webhooks[${i}].url`, hook.url);
      checkHeaders(`${base}.settings.webhooks[${i}].headers`, hook.headers ?? {});
    });
    const urls = [...(webhookUrl !== undefined ? [webhookUrl] : []), ...webhooks.map((w) => w.url)];
    if (urls.length === 0) throw new ConfigError(`${base}.settings.webhooks`, 'at least one webhook URL is required');
    if (urls.length > LIMITS.endpointsPerDestination) {
      throw new ConfigError(
        `${base}.settings.webhooks`,
        `at most ${LIMITS.endpointsPerDestination} endpoints (webhookUrl counts as one), got ${urls.length}`,
      );
    }
    const seen = new Set<string>();
    urls.forEach((url) => {
      if (seen.has(url)) throw new ConfigError(`${base}.settings.webhooks`, `duplicate endpoint ${redactUrl(url)}`);
      seen.add(url);
    });
  });
  raw.delivery.ssrf.allowCidrs.forEach((cidr, i) => {
    // Parsed as the deliverer parses it: an address plus a prefix length within its family's bits.
    try {
      ipaddr.parseCIDR(cidr);
    } catch {
      throw new ConfigError(
        `delivery.ssrf.allowCidrs[${i}]`,
        `not a CIDR (address/prefix, prefix ≤ 32 for IPv4, ≤ 128 for IPv6): ${JSON.stringify(cidr)}`,
      );
    }
  });
}
