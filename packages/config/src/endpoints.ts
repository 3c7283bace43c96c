import { redactUrl } from '@sluice/logging';
import { LIMITS } from './constants.ts';
import { ConfigError } from './errors.ts';
import { headerNameProblem, headerValueProblem } from './header-rules.ts';
import type { RawConfig } from './schema.ts';
import type { ResolveSecret } from './secrets.ts';
import type { Endpoint } from './types.ts';
import { subField } from './field-path.ts';

type RawDestination = RawConfig['destinations'][number];

/**
 * The rule for a URL Sluice POSTs webhooks to — a destination's endpoint, `operatorEvents.url`:
 * a full `http` or `https` URL (the error names the field, the URL shown redacted).
 */
export function checkWebhookUrl(field: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(field, `must be a full http or https URL, got ${JSON.stringify(redactUrl(value))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(field, `must use http or https, got ${url.protocol}`);
  }
  return url;
}

/** A userinfo part as written, percent-escapes undone (a stray `%` is kept as it is). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Credentials in the URL's userinfo are sent as HTTP Basic authentication (as curl does), unless
 * the endpoint sets its own `Authorization` header, which wins.
 */
function withUserinfo(url: URL, headers: Record<string, string>): Record<string, string> {
  if (url.username === '' && url.password === '') return headers;
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  const credentials = `${decoded(url.username)}:${decoded(url.password)}`;
  return { ...headers, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/** The headers with their secrets resolved, each checked by the rules that bind when it is sent. */
function resolveHeaders(
  field: string,
  raw: RawDestination['settings']['webhooks'][number]['headers'],
  secret: ResolveSecret,
) {
  const headers: Record<string, string> = {};
  const names = Object.keys(raw ?? {});
  if (names.length > LIMITS.headersPerEndpoint) {
    throw new ConfigError(field, `at most ${LIMITS.headersPerEndpoint} headers, got ${names.length}`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    const value = secret(`${field}.${name}`, raw![name]!);
    // The problem is named, never the value: it may be a secret.
    const problem = headerNameProblem(name) ?? headerValueProblem(value);
    if (problem) throw new ConfigError(`${field}.${name}`, problem);
    if (seen.has(name.toLowerCase()))
      throw new ConfigError(`${field}.${name}`, 'header name repeated (names are case-insensitive)');
    seen.add(name.toLowerCase());
    headers[name] = value;
  }
  return headers;
}

/**
 * A destination's endpoints — the legacy `webhookUrl` first, then `webhooks[]` — with their
 * secrets (`url`, header values) resolved and checked: 1–5 endpoints, http or https, no
 * duplicates. Each gets its `ref`, the name records give it: the redacted URL, and `#2`, `#3`…
 * after it when an earlier endpoint of the destination redacts to the same text.
 */
export function resolveEndpoints(d: RawDestination, base: string, secret: ResolveSecret): Endpoint[] {
  const { webhooks, webhookUrl } = d.settings;
  const endpoints: Endpoint[] = [];
  const webhooksField = subField(base, 'settings.webhooks');
  if (webhookUrl !== undefined) {
    const field = subField(base, 'settings.webhookUrl');
    const url = secret(field, webhookUrl);
    endpoints.push({ url, ref: '', headers: withUserinfo(checkWebhookUrl(field, url), {}) });
  }
  webhooks.forEach((w, i) => {
    const field = subField(base, `settings.webhooks[${i}]`);
    const url = secret(`${field}.url`, w.url);
    const parsed = checkWebhookUrl(`${field}.url`, url);
    endpoints.push({
      url,
      ref: '',
      headers: withUserinfo(parsed, resolveHeaders(`${field}.headers`, w.headers, secret)),
      ...(w.maxRequestsPerSecond !== undefined && { maxRequestsPerSecond: w.maxRequestsPerSecond }),
    });
  });
  if (endpoints.length === 0) throw new ConfigError(webhooksField, 'at least one webhook URL is required');
  if (endpoints.length > LIMITS.endpointsPerDestination) {
    throw new ConfigError(
      webhooksField,
      `at most ${LIMITS.endpointsPerDestination} endpoints (webhookUrl counts as one), got ${endpoints.length}`,
    );
  }
  const urls = new Set<string>();
  const refs = new Map<string, number>();
  for (const e of endpoints) {
    if (urls.has(e.url)) throw new ConfigError(webhooksField, `duplicate endpoint ${redactUrl(e.url)}`);
    urls.add(e.url);
    const redacted = redactUrl(e.url);
    const n = (refs.get(redacted) ?? 0) + 1;
    refs.set(redacted, n);
    e.ref = n === 1 ? redacted : `${redacted}#${n}`;
    if (e.ref.length > LIMITS.endpointRefChars)
      throw new ConfigError(
        webhooksField,
        `endpoint ${e.ref.slice(0, 60)}…: its redacted URL, the name records and the API give it, is ${e.ref.length} characters, at most ${LIMITS.endpointRefChars}`,
      );
  }
  return endpoints;
}
