/**
 * An endpoint URL fit for a log line: user name and password (userinfo) and the query string
 * replaced by `redacted`, the fragment dropped. Endpoints often carry tokens in exactly those
 * places. An unparsable URL is not echoed at all.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(unparsable URL)';
  }
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = 'redacted';
    parsed.password = '';
  }
  if (parsed.search !== '') parsed.search = 'redacted';
  parsed.hash = '';
  return parsed.toString();
}
