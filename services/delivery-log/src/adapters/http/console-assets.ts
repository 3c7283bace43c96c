import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The web console (docs/delivery-log.md, "Console"): static files shipped with the service, plain
 * JavaScript modules the browser runs as they are (no build, no CDN). Read once, served from memory.
 */
const DIR = new URL('../../../console/', import.meta.url);
const HTML = 'text/html; charset=utf-8';
/** The console's JavaScript modules, each served at `/console/<name>.js`. */
const MODULES = ['app', 'ui', 'control', 'ledger', 'destination-form', 'origin', 'signing', 'rotate', 'portal'];
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: HTML },
  // Where a portal link opens the console (`/console/#portal=<token>`, docs/reference/portal-links.md).
  '/console/': { file: 'index.html', type: HTML },
  '/console/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(
    MODULES.map((name) => [`/console/${name}.js`, { file: `${name}.js`, type: 'text/javascript; charset=utf-8' }]),
  ),
};

const cache = new Map<string, Buffer>();
function asset(file: string): Buffer {
  let body = cache.get(file);
  if (!body) cache.set(file, (body = readFileSync(new URL(file, DIR))));
  return body;
}

/** Serves a console file; false when `path` is not one. */
export async function serveConsole(path: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const entry = FILES[path];
  if (!entry || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const body = asset(entry.file);
  res.writeHead(200, {
    'content-type': entry.type,
    'content-length': body.length,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
