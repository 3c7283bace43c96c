// Portal links in the console (docs/reference/portal-links.md): opening `/console/#portal=<token>`
// keeps the token in this tab's sessionStorage (never in the address bar after load), uses it as
// the bearer of every API call, shows whose portal it is and until when, and leaves out the
// operator's pages and controls. A link past its expiry or refused gets a page saying so.

import { el, main, TOKEN_KEY } from './ui.js';

const PORTAL_KEY = 'sluice-delivery-log-portal';

/** The grant a link carries (its third part, base64url JSON), for the banner; the API checks the signature. */
function grantOf(token) {
  try {
    const body = token.split('.')[2].replaceAll('-', '+').replaceAll('_', '/');
    const grant = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(body), (c) => c.charCodeAt(0))));
    return typeof grant.tenant === 'string' && typeof grant.expiresAt === 'number' ? grant : undefined;
  } catch {
    return undefined;
  }
}

/** Takes a link from the address (`#portal=<token>`) into sessionStorage and out of the address bar. */
export function takePortalLink() {
  if (!location.hash.startsWith('#portal=')) return;
  const token = decodeURIComponent(location.hash.slice('#portal='.length));
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.setItem(PORTAL_KEY, JSON.stringify(grantOf(token) ?? {}));
}

/** The grant of the portal link this tab uses; undefined when it uses an operator's token. */
export function portalGrant() {
  const stored = sessionStorage.getItem(PORTAL_KEY);
  return stored === null ? undefined : JSON.parse(stored);
}

/** Whether this tab is a portal's view: the operator's pages and controls are left out. */
export const isPortal = () => portalGrant() !== undefined;

/** Shapes the page for a portal: the banner, the operator's navigation and token form out. */
export function enterPortal() {
  const grant = portalGrant();
  if (grant === undefined) return;
  for (const node of document.querySelectorAll('.operator-only')) node.remove();
  if (document.getElementById('portal-banner')) return;
  const expires = grant.expiresAt ? new Date(grant.expiresAt).toLocaleString() : 'unknown';
  const scope = grant.destinationId ? `, destination ${grant.destinationId}` : '';
  document
    .querySelector('header')
    .append(
      el(
        'p',
        { id: 'portal-banner', class: 'portal-banner' },
        `Portal of ${grant.tenant}${scope} (expires ${expires})`,
      ),
    );
}

/** Whether the portal link is past the expiry it carries (the API refuses it then too). */
export function portalExpired() {
  const grant = portalGrant();
  return grant !== undefined && (typeof grant.expiresAt !== 'number' || grant.expiresAt <= Date.now());
}

/** The page for a link that expired or is refused: no token form, nothing of the log. */
export function portalRefusedPage(reason) {
  main.replaceChildren(
    el('h2', {}, 'This portal link cannot be used'),
    el('p', { class: 'error', role: 'alert', id: 'portal-refused' }, reason),
    el('p', {}, 'Ask whoever sent it for a new link.'),
  );
  document.title = 'Portal link refused · Sluice delivery log';
}
