import { RESERVED_HEADERS } from './constants.ts';

/**
 * The rules a static endpoint header must meet to be sent on every request (RFC 9110 §5, and
 * what undici accepts), checked when the config is loaded so that no bad header can make every
 * send fail later (docs/configuration.md, "Endpoint headers").
 */

/** RFC 9110 field-name: a token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Connection-specific (hop-by-hop) fields and fields that change how the request is framed or
 * answered: the HTTP client owns them (undici refuses most outright). Compared case-insensitively.
 */
export const HOP_BY_HOP_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
] as const;

/** Why a header name cannot be configured, or undefined. */
export function headerNameProblem(name: string): string | undefined {
  if (!TOKEN.test(name)) return 'header name is not a valid HTTP token (RFC 9110)';
  const lower = name.toLowerCase();
  if ((RESERVED_HEADERS as readonly string[]).includes(lower)) return 'header name is reserved and cannot be set';
  if ((HOP_BY_HOP_HEADERS as readonly string[]).includes(lower))
    return 'header name is hop-by-hop (set by the HTTP client) and cannot be set';
  return undefined;
}

/**
 * Why a header value cannot be sent, or undefined. RFC 9110 field-value: visible ASCII, space
 * and tab inside, no white space at either end. Latin-1 letters (0xA0–0xFF, the `obs-text` HTTP
 * still carries) pass; control characters (C0 but tab, DEL, C1) and anything beyond Latin-1 do not.
 */
export function headerValueProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0d || c === 0x0a || c === 0) return 'header value must not contain CR, LF or NUL';
    if ((c < 0x20 && c !== 0x09) || (c >= 0x7f && c < 0xa0))
      return `header value must not contain control characters (U+${hex(c)} at ${i})`;
    if (c > 0xff) return `header value must be Latin-1 (U+${hex(c)} at ${i}); encode other text first`;
  }
  if (/^[ \t]|[ \t]$/.test(value)) return 'header value must not start or end with white space';
  return undefined;
}

const hex = (c: number) => c.toString(16).toUpperCase().padStart(4, '0');
