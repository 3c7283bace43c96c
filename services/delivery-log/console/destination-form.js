// Runtime destinations in the console (docs/delivery-log.md, "Console"): the form that creates one
// or changes one, through the runtime destinations' own routes (docs/reference/runtime-destinations.md,
// "API"). Stored URLs and header values are secrets the API never reads back, so the form never
// shows them; the signing secrets generated for the schemes chosen are shown once, on the page that
// follows the creation (signing.js), and kept nowhere else (not in the address, not in storage).

import { isDefaultChoice, SCHEME_LABEL, SCHEMES, showSecretsOnce } from './signing.js';
import { allPages, api, el, say, show, time } from './ui.js';

const DEFINITIONS = '/api/v1/destination-definitions';
/** Endpoints a destination has at most (`LIMITS.endpointsPerDestination`, `webhookUrl` counting as one). */
const MAX_ENDPOINTS = 5;

/** A value the form refuses before sending anything, with the field to put the focus on. */
class FormError extends Error {
  constructor(message, field) {
    super(message);
    this.field = field;
  }
}

/** `Name: value` a line (blank lines skipped) into a headers object; `n` numbers the endpoint for the message. */
function parseHeaders(textarea, n) {
  const headers = {};
  for (const [i, line] of textarea.value.split('\n').entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FormError(`Headers of endpoint ${n}, line ${i + 1}: write it as Name: value`, textarea);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The endpoint rows: a URL and its headers each, 1–5, added and removed in place. */
function endpointRows({ urlRequired }) {
  const rows = el('div', { class: 'endpoint-rows' });
  const add = el('button', { type: 'button', class: 'secondary' }, 'Add endpoint');
  const renumber = () => {
    [...rows.children].forEach((row, i) => {
      row.querySelector('legend').textContent = `Endpoint ${i + 1}`;
      row.querySelector('input').setAttribute('aria-label', `URL of endpoint ${i + 1}`);
      row.querySelector('textarea').setAttribute('aria-label', `Headers of endpoint ${i + 1}`);
      row.querySelector('button').setAttribute('aria-label', `Remove endpoint ${i + 1}`);
      row.querySelector('button').hidden = rows.children.length === 1;
    });
    add.disabled = rows.children.length >= MAX_ENDPOINTS;
  };
  const addRow = () => {
    const input = { type: 'url', maxlength: 2000, autocomplete: 'off', spellcheck: 'false' };
    const row = el(
      'fieldset',
      { class: 'endpoint' },
      el('legend', {}),
      el(
        'label',
        {},
        'URL',
        el('input', { ...input, name: 'url', required: urlRequired && rows.children.length === 0 }),
      ),
      el(
        'label',
        {},
        'Headers, one Name: value a line',
        el('textarea', { name: 'headers', rows: 2, spellcheck: 'false', autocomplete: 'off' }),
      ),
      el('button', { type: 'button', class: 'secondary', onclick: () => (row.remove(), renumber()) }, 'Remove'),
    );
    rows.append(row);
    renumber();
    return row;
  };
  add.addEventListener('click', () => addRow().querySelector('input').focus());
  addRow();
  /** The rows given a URL, in order, as the definition's `settings.webhooks`. */
  const read = () =>
    [...rows.children].flatMap((row, i) => {
      const url = row.querySelector('input').value.trim();
      const headers = parseHeaders(row.querySelector('textarea'), i + 1);
      if (url === '' && Object.keys(headers).length > 0)
        throw new FormError(`Endpoint ${i + 1} has headers but no URL`, row.querySelector('input'));
      if (url === '') return [];
      return [{ url, ...(Object.keys(headers).length > 0 && { headers }) }];
    });
  /** The input of the endpoint a field of the API names (`settings.webhooks[1].headers.X`), if any. */
  const inputOf = (field) => {
    const m = /^settings\.webhooks\[(\d+)\]\.(url|headers)/.exec(field);
    const row = m && [...rows.children].filter((r) => r.querySelector('input').value.trim() !== '')[Number(m[1])];
    return row?.querySelector(m[2] === 'url' ? 'input' : 'textarea');
  };
  return { node: el('div', {}, rows, add), read, inputOf };
}

/** One checkbox per source the API lists (the config file's and the runtime ones), `chosen` checked. */
function sourceBoxes(sources, chosen) {
  const boxes = sources.map((s) =>
    el(
      'label',
      { class: 'choice' },
      el('input', { type: 'checkbox', name: 'sourceIds', value: s.id, checked: chosen.includes(s.id) }),
      ` ${s.name ? `${s.name} (${s.id})` : s.id}`,
      el('span', { class: 'muted' }, s.origin === 'file' ? ' · config file' : ' · runtime'),
    ),
  );
  return el(
    'fieldset',
    { class: 'sources' },
    el('legend', {}, 'Sources'),
    boxes.length ? boxes : el('p', {}, 'No source is defined yet.'),
    el('p', { class: 'muted' }, 'It gets the events of the sources checked; with none, no events.'),
  );
}

/** What each scheme puts on a webhook, for the choice of schemes. */
const SCHEME_HINT = {
  'x-signature': 'hex HMAC-SHA1 of the body in X-Signature (the default)',
  'standard-webhooks': 'webhook-id, webhook-timestamp and webhook-signature, checked with a Standard Webhooks library',
};

/** A checkbox per signing scheme (the default checked); at least one, each with its own generated secret. */
function schemeBoxes() {
  const boxes = SCHEMES.map((scheme) =>
    el('input', { type: 'checkbox', name: 'schemes', value: scheme, checked: isDefaultChoice([scheme]) }),
  );
  const node = el(
    'fieldset',
    { class: 'schemes' },
    el('legend', {}, 'Signing'),
    boxes.map((box) =>
      el(
        'label',
        { class: 'choice' },
        box,
        ` ${SCHEME_LABEL[box.value]}`,
        el('span', { class: 'muted' }, ` · ${SCHEME_HINT[box.value]}`),
      ),
    ),
    el('p', { class: 'muted' }, 'Each scheme chosen gets a secret of its own, shown once after the creation.'),
  );
  /** The schemes checked, in the order offered. */
  const read = () => {
    const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
    if (chosen.length === 0) throw new FormError('Choose at least one signing scheme', boxes[0]);
    return chosen;
  };
  return { node, read };
}

/**
 * The destination form. `current`: the definition it changes (undefined: a new one), whose
 * non-secret fields it starts from; `submit` gets what the form holds and does the request; a
 * refusal, the form's or the API's, is shown in the form with the focus on the field it names.
 */
function destinationForm({ sources, current, submitLabel, submit }) {
  const creating = current === undefined;
  const id = el('input', {
    name: 'id',
    required: true,
    maxlength: 200,
    pattern: '[A-Za-z0-9._\\-]+',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const name = el('input', { name: 'name', maxlength: 200, value: current?.name ?? '' });
  const endpoints = endpointRows({ urlRequired: creating });
  const schemes = creating ? schemeBoxes() : undefined;
  const filter = el(
    'textarea',
    { name: 'filter', rows: 4, spellcheck: 'false' },
    current?.filter ? JSON.stringify(current.filter, null, 2) : '',
  );
  const enabled = el('input', { type: 'checkbox', name: 'enabled', checked: current?.enabled !== false });
  const problem = el('p', { class: 'error', role: 'alert' });
  const button = el('button', { type: 'submit' }, submitLabel);
  const form = el(
    'form',
    { class: 'destination-form', 'aria-label': submitLabel },
    creating ? el('label', {}, 'Id', id, el('span', { class: 'muted' }, 'letters, digits, . _ - (at most 200)')) : null,
    el('label', {}, 'Name (optional)', name),
    sourceBoxes(sources, current?.sourceIds ?? []),
    el(
      'fieldset',
      {},
      el('legend', {}, 'Endpoints'),
      el(
        'p',
        { class: 'muted' },
        creating
          ? `Up to ${MAX_ENDPOINTS}, each with optional headers. Header values are kept encrypted and never shown again.`
          : `Leave every URL empty to keep the endpoints above. To change them, give every endpoint (up to ${MAX_ENDPOINTS}) with its headers again: stored URLs and header values are never shown.`,
      ),
      endpoints.node,
    ),
    el(
      'label',
      {},
      'Filter (JSON, optional)',
      filter,
      el(
        'span',
        { class: 'muted' },
        'As in the config file: {"types": ["track"], "events": ["Order *"]}; empty: every event.',
      ),
    ),
    schemes?.node,
    el('label', { class: 'choice' }, enabled, ' Enabled'),
    problem,
    el('div', { class: 'form-actions' }, button, ' ', el('a', { href: '#/' }, 'Cancel')),
  );
  const refuse = (message, field) => {
    problem.textContent = message;
    field?.focus();
  };
  const fieldOf = (field = '') =>
    field === 'id'
      ? id
      : field === 'name'
        ? name
        : field.startsWith('filter')
          ? filter
          : field.startsWith('sourceIds')
            ? form.querySelector('[name=sourceIds]')
            : field.startsWith('settings.signing')
              ? form.querySelector('[name=schemes]')
              : endpoints.inputOf(field);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    problem.textContent = '';
    let parsedFilter;
    let webhooks;
    let chosenSchemes;
    try {
      webhooks = endpoints.read();
      chosenSchemes = schemes?.read();
      if (filter.value.trim() !== '') {
        try {
          parsedFilter = JSON.parse(filter.value);
        } catch (err) {
          throw new FormError(`The filter is not JSON: ${err.message}`, filter);
        }
      }
    } catch (err) {
      return refuse(err.message, err.field);
    }
    button.disabled = true;
    try {
      await submit({
        id: id.value.trim(),
        name: name.value.trim(),
        sourceIds: [...form.querySelectorAll('[name=sourceIds]:checked')].map((b) => b.value),
        webhooks,
        schemes: chosenSchemes,
        filter: parsedFilter,
        enabled: enabled.checked,
      });
    } catch (err) {
      refuse(err.message, fieldOf(err.field));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

/** `#/destinations/new`: the form, then the secrets of the destination created. */
export async function newDestinationPage() {
  const sources = await allPages('/api/v1/source-definitions', 'sources');
  const submit = async (v) => {
    const definition = {
      id: v.id,
      ...(v.name && { name: v.name }),
      type: 'webhooks',
      enabled: v.enabled,
      sourceIds: v.sourceIds,
      settings: { webhooks: v.webhooks, ...(!isDefaultChoice(v.schemes) && { signing: { schemes: v.schemes } }) },
      ...(v.filter !== undefined && { filter: v.filter }),
    };
    const { destination, secrets } = await api(DEFINITIONS, { method: 'POST', body: JSON.stringify(definition) });
    showSecretsOnce({ title: `Destination ${destination.id} created`, secrets });
    say(`Created ${v.id}.`);
  };
  show('New destination', destinationForm({ sources, submitLabel: 'Create destination', submit }));
}

/**
 * The merge patch of an edit: sources, enabled, name and filter as the form holds them; the
 * endpoints only when URLs were given, each keeping the other settings of the endpoint it replaces.
 */
function editPatch(current, v) {
  const patch = { sourceIds: v.sourceIds, enabled: v.enabled };
  if (v.name !== (current.name ?? '')) patch.name = v.name || null;
  if (v.filter !== undefined) patch.filter = v.filter;
  else if (current.filter !== undefined) patch.filter = null;
  if (v.webhooks.length > 0) {
    const before = current.settings?.webhooks ?? [];
    patch.settings = {
      webhooks: v.webhooks.map((w, i) => {
        const { url: _url, headers: _headers, ...kept } = before[i] ?? {};
        return { ...kept, ...w };
      }),
      // The form gives the endpoints as a list: a single `webhookUrl` it replaces goes.
      ...(current.settings?.webhookUrl !== undefined && { webhookUrl: null }),
    };
  }
  return patch;
}

/** The endpoints an edit starts from, as records name them (redacted), with their header names only. */
function currentEndpoints(refs, definition) {
  const settings = definition.settings ?? {};
  const listed = [...(settings.webhookUrl !== undefined ? [{}] : []), ...(settings.webhooks ?? [])];
  return el(
    'div',
    {},
    el('p', {}, 'Current endpoints, as records name them:'),
    el(
      'ul',
      { class: 'current-endpoints', 'aria-label': 'Current endpoints' },
      refs.map((ref, i) => {
        const names = Object.keys(listed[i]?.headers ?? {});
        return el('li', {}, el('code', {}, ref), names.length ? ` · headers ${names.join(', ')}` : '');
      }),
    ),
  );
}

/** `#/destinations/<id>/edit`: a runtime destination's form, saved at the version it was read at (`If-Match`). */
export async function editDestinationPage(id) {
  const path = `${DEFINITIONS}/${encodeURIComponent(id)}`;
  const [item, sources, { destinations }] = await Promise.all([
    api(path),
    allPages('/api/v1/source-definitions', 'sources'),
    api('/api/v1/destinations'),
  ]);
  if (item.origin !== 'runtime') {
    show(`Destination ${id}`, el('p', {}, `Declared in the config file ${item.file}: it is changed there.`));
    return;
  }
  const refs = destinations.find((d) => d.id === id)?.endpoints ?? [];
  const submit = async (v) => {
    const answer = await api(path, {
      method: 'PATCH',
      headers: { 'if-match': `"${item.version}"` },
      body: JSON.stringify(editPatch(item.definition, v)),
    });
    say(`Saved ${id}: version ${answer.destination.version}.`);
    location.hash = '#/';
  };
  show(
    `Edit ${id}`,
    el('p', { class: 'muted' }, `Version ${item.version}, changed `, time(item.updatedAt), ` by ${item.updatedBy}.`),
    currentEndpoints(refs, item.definition),
    destinationForm({ sources, current: item.definition, submitLabel: 'Save changes', submit }),
  );
}
