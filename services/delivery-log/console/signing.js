// Signing in the console (docs/delivery-log.md, "Console"): the schemes a runtime destination can
// sign with, and the one page that shows a generated signing secret, after a creation or a
// rotation. That page is the only place a secret is ever shown: it is kept in no address, storage
// or other page, and leaving the page drops it.

import { el, say, show } from './ui.js';

/**
 * The schemes a destination can sign with, the default first (`SIGNING_SCHEMES` and
 * `DEFAULT_SIGNING_SCHEMES` of `@sluice/config`; the console's test checks the form offers exactly those).
 */
export const SCHEMES = ['x-signature', 'standard-webhooks'];
export const SCHEME_LABEL = { 'x-signature': 'X-Signature', 'standard-webhooks': 'Standard Webhooks' };
const DEFAULT_SCHEMES = ['x-signature'];

/** The schemes a definition (as the API reads it back) signs with: its own, or the default. */
export function schemesOf(definition) {
  const schemes = definition?.settings?.signing?.schemes;
  return Array.isArray(schemes) ? schemes : DEFAULT_SCHEMES;
}

/** Whether a choice of schemes is the default one, which a definition need not name. */
export function isDefaultChoice(schemes) {
  return schemes.length === DEFAULT_SCHEMES.length && schemes.every((s) => DEFAULT_SCHEMES.includes(s));
}

const label = (scheme) => SCHEME_LABEL[scheme] ?? scheme;

/** A generated secret with a button that copies it. */
function secretLine({ scheme, secret }) {
  const value = el('code', { class: 'secret-value' }, secret);
  const copy = el('button', { type: 'button', 'aria-label': `Copy the ${label(scheme)} secret` }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      say('Secret copied to the clipboard.');
    } catch {
      getSelection().selectAllChildren(value);
      say('The browser refused the clipboard: the secret is selected, copy it with the keyboard.');
    }
  });
  return el('p', {}, `${label(scheme)}: `, value, ' ', copy);
}

/**
 * The page that follows a change which generated signing secrets: each shown this once, with a
 * Copy button; `note` (optional) says what follows for the receiver (a rotation's overlap).
 */
export function showSecretsOnce({ title, secrets, note }) {
  show(
    title,
    secrets.length
      ? el(
          'section',
          { class: 'secret', 'aria-labelledby': 'secret-heading' },
          el('h3', { id: 'secret-heading' }, secrets.length > 1 ? 'Signing secrets' : 'Signing secret'),
          el(
            'p',
            { class: 'note' },
            'Shown this once: copy it now and give it to the receiver, which checks every webhook’s signature with it. Sluice keeps it encrypted and never shows it again.',
          ),
          secrets.map(secretLine),
          note ? el('p', { class: 'overlap' }, note) : null,
        )
      : null,
    el('p', {}, el('a', { href: '#/' }, 'Back to Destinations')),
  );
}
