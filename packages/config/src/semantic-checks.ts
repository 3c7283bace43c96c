import { LIMITS, RESERVED_HEADERS } from './constants.ts';
import { ConfigError } from './errors.ts';
import type { RawConfig } from './schema.ts';

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(field, `must be a full http or https URL, got ${JSON.stringify(value)}`);
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
  for (const name of names) {
    if (!HTTP_TOKEN.test(name)) throw new ConfigError(`${field}.${name}`, 'header name is not a valid HTTP token');
    if ((RESERVED_HEADERS as readonly string[]).includes(name.toLowerCase())) {
      throw new ConfigError(`${field}.${name}`, 'header name is reserved and cannot be set');
    }
    if (/[\r\n\0]/.test(headers[name]!)) {
      throw new ConfigError(`${field}.${name}`, 'header value must not contain CR, LF or NUL');
    }
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
      if (seen.has(url)) throw new ConfigError(`${base}.settings.webhooks`, `duplicate endpoint ${url}`);
      seen.add(url);
    });
  });
  raw.delivery.ssrf.allowCidrs.forEach((cidr, i) => {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(cidr)) {
      throw new ConfigError(`delivery.ssrf.allowCidrs[${i}]`, `not a CIDR: ${JSON.stringify(cidr)}`);
    }
  });
}
