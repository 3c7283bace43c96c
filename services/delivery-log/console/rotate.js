// A runtime destination's signing secret rotated from the console (docs/delivery-log.md, "Console"),
// through `POST /api/v1/destination-definitions/{id}/rotate-secret` at the version the page was read
// at (docs/reference/runtime-destinations.md, "Changes and their outcomes"): the new secret is shown
// once, on the page signing.js draws, with how long the old one keeps signing.

import { SCHEME_LABEL, schemesOf, showSecretsOnce } from './signing.js';
import { api, el, say, show, time } from './ui.js';

const HOUR_MS = 3_600_000;

/** "24 hours", "1.5 hours", "0.25 hours": an overlap as the page says it. */
const hours = (ms) => `${Number((ms / HOUR_MS).toFixed(2))} ${ms === HOUR_MS ? 'hour' : 'hours'}`;

/**
 * What the rotation means for the receiver, read from the answer: the windows of the scheme's
 * secrets, the new one named by its field (`settings.signing.xSignature.secrets[1].secret`).
 */
function overlapNote({ destination, secrets: [fresh] }) {
  const [, key, index] = /^settings\.signing\.(\w+)\.secrets\[(\d+)\]/.exec(fresh.field) ?? [];
  const set = destination.definition.settings?.signing?.[key]?.secrets ?? [];
  const at = Date.parse(destination.updatedAt);
  const ends = set.filter((_, i) => i !== Number(index)).map((s) => Date.parse(s.notAfter ?? '') || at);
  const until = Math.max(at, ...ends);
  if (until <= at) return 'The old secret no longer signs: the new one signs every webhook from now on.';
  const when = [time(new Date(until).toISOString()), ` (${hours(until - at)} from now)`];
  return fresh.scheme === 'x-signature'
    ? [
        'The old secret keeps signing until ',
        ...when,
        '; then the new one signs in its place. Give it to the receiver before then.',
      ]
    : [
        'Every webhook is signed with the new secret from now on, and with the old one too until ',
        ...when,
        ': give the new one to the receiver before then.',
      ];
}

/** The scheme to rotate: a radio button each when the destination signs with more than one. */
function schemeChoice(schemes) {
  if (schemes.length === 1)
    return { node: el('p', {}, `Scheme: ${SCHEME_LABEL[schemes[0]] ?? schemes[0]}`), read: () => schemes[0] };
  const radios = schemes.map((s, i) => el('input', { type: 'radio', name: 'scheme', value: s, checked: i === 0 }));
  return {
    node: el(
      'fieldset',
      {},
      el('legend', {}, 'Scheme'),
      radios.map((r) => el('label', { class: 'choice' }, r, ` ${SCHEME_LABEL[r.value] ?? r.value}`)),
    ),
    read: () => radios.find((r) => r.checked).value,
  };
}

/** `#/destinations/<id>/rotate`: the rotation's form, then the new secret, shown once. */
export async function rotateSecretPage(id) {
  const path = `/api/v1/destination-definitions/${encodeURIComponent(id)}`;
  const item = await api(path);
  if (item.origin !== 'runtime') {
    show(`Destination ${id}`, el('p', {}, `Declared in the config file ${item.file}: its secrets are rotated there.`));
    return;
  }
  const scheme = schemeChoice(schemesOf(item.definition));
  const overlap = el('input', { type: 'number', name: 'overlap', min: 0, step: 'any', inputmode: 'decimal' });
  const problem = el('p', { class: 'error', role: 'alert' });
  const button = el('button', { type: 'submit' }, 'Rotate secret');
  const form = el(
    'form',
    { class: 'destination-form', 'aria-label': 'Rotate secret' },
    scheme.node,
    el(
      'label',
      {},
      'Old secret keeps signing for (hours)',
      overlap,
      el(
        'span',
        { class: 'muted' },
        'Empty: the default overlap, 24 hours. X-Signature: the old secret signs until then, the new one after (one secret signs X-Signature). Standard Webhooks: both sign until then. 0: the new one alone, at once.',
      ),
    ),
    problem,
    el('div', { class: 'form-actions' }, button, ' ', el('a', { href: '#/' }, 'Cancel')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    problem.textContent = '';
    const overlapMs = overlap.value === '' ? undefined : Math.round(Number(overlap.value) * HOUR_MS);
    button.disabled = true;
    try {
      const answer = await api(`${path}/rotate-secret`, {
        method: 'POST',
        headers: { 'if-match': `"${item.version}"` },
        body: JSON.stringify({ scheme: scheme.read(), ...(overlapMs !== undefined && { overlapMs }) }),
      });
      showSecretsOnce({ title: `New signing secret for ${id}`, secrets: answer.secrets, note: overlapNote(answer) });
      say(`Rotated the secret of ${id}: version ${answer.destination.version}.`);
    } catch (err) {
      problem.textContent = err.message;
      (err.field === 'overlapMs' ? overlap : button).focus();
    } finally {
      button.disabled = false;
    }
  });
  show(
    `Rotate the signing secret of ${id}`,
    el('p', { class: 'muted' }, `Version ${item.version}, changed `, time(item.updatedAt), ` by ${item.updatedBy}.`),
    el(
      'p',
      {},
      'A new secret is generated and shown once. The old one keeps signing for the overlap, so the receiver has that long to start checking with the new one.',
    ),
    form,
  );
}
