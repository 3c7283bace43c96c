/** A path of the OpenAPI document as a pattern: each `{param}` one path segment. */
interface PathPattern {
  path: string;
  pattern: RegExp;
  params: number;
}

const literal = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/**
 * Finds the OpenAPI path (`/api/v1/messages/{sourceId}/{messageId}`) a request's path is an
 * instance of: what the authorization policy names a route by. Where two could match, the one with
 * fewer parameters wins (a literal segment before a parameter).
 */
export function pathMatcher(paths: Iterable<string>): (pathname: string) => string | undefined {
  const patterns: PathPattern[] = [...paths]
    .map((path) => {
      const parts = path.split(/(\{[^}]+\})/);
      const source = parts.map((p) => (p.startsWith('{') ? '([^/]+)' : literal(p))).join('');
      return { path, pattern: new RegExp(`^${source}$`), params: parts.filter((p) => p.startsWith('{')).length };
    })
    .sort((a, b) => a.params - b.params);
  return (pathname) => patterns.find((p) => p.pattern.test(pathname))?.path;
}
