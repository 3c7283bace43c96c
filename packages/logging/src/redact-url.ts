/**
 * An endpoint URL fit to record or show — attempt records of every outcome, retry and dead-letter
 * records, log lines, the delivery log's API and console, CLI output: credentials in the userinfo
 * and the query string (where tokens often ride) are replaced by `***`, the fragment is dropped;
 * scheme, host, port and path stay, so the endpoint is still recognisable. A value that does not
 * parse as a URL is cut at the same places (anything before an `@` of its authority, everything
 * from `?`). The one redaction of Sluice: every place that records or shows a URL calls this.
 */
export function redactUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {}
  // No authority (`user:pass@host/x` parses as the scheme `user:`): cut it as text.
  if (parsed === undefined || parsed.host === '') {
    return url
      .replace(/^((?:[^/?#]*\/\/)?)[^/?#]*@/, '$1***@')
      .replace(/[?#].*$/s, (rest) => (rest.startsWith('?') ? '?***' : ''));
  }
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = '***';
    parsed.password = '';
  }
  const query = parsed.search !== '' ? '?***' : '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href + query;
}

/** A URL up to white space, `;` or `,`, and short of a `:` that ends it (`<url>: <error>`). */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s;,]+?(?=:?(?:[\s;,]|$))/gi;

/** Free text (an error description) with every URL in it passed through `redactUrl`. */
export function redactUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => redactUrl(url));
}
