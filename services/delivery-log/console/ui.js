// The delivery-log console's building blocks (docs/delivery-log.md, "Console"): elements, the
// status line, API reads tied to the section on screen. Every value is written as text.

export const main = document.getElementById('main');
const statusBox = document.getElementById('status');
export const TOKEN_KEY = 'sluice-delivery-log-token';
/**
 * Bumped on every navigation. A section's answers that arrive after the user left it are dropped
 * (`LeftSection`), so a slow section never replaces the one the user went to meanwhile.
 */
let section = 0;
export class LeftSection extends Error {}

/** A new section starts (a navigation): answers to the one before are dropped from now on. */
export function enterSection() {
  section += 1;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c instanceof Node ? c : String(c));
  return node;
}

/** Shows an error in the status line, unless it only says the user left the section. */
export function report(err) {
  if (!(err instanceof LeftSection)) say(err.message);
}

export function say(text) {
  statusBox.textContent = text;
  clearTimeout(say.t);
  say.t = setTimeout(() => (statusBox.textContent = ''), 4000);
}

/** A refusal of the API: its message, and the field it names (`settings.webhooks[0].url`) when it names one. */
export class ApiError extends Error {
  constructor(message, field, status) {
    super(message);
    this.field = field;
    this.status = status;
  }
}

// A read for the section on screen; the answer of an action (a POST) is reported wherever the user is.
// `init.headers` adds to the token and content type (an `If-Match`).
export async function api(path, init = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const asked = section;
  const res = await fetch(path, {
    ...init,
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
  });
  const body = await res.json().catch(() => ({}));
  if (asked !== section && (init.method ?? 'GET') === 'GET') throw new LeftSection();
  if (!res.ok)
    throw new ApiError(
      res.status === 401 ? refusedMessage(token, body) : (body.message ?? `HTTP ${res.status}`),
      body.field,
      res.status,
    );
  return body;
}

/** A 401 in words: a portal link's refusal as the API says it, else the token form's hint. */
const refusedMessage = (token, body) =>
  token.startsWith('spl1.')
    ? `The portal link was refused: ${body.message ?? 'not valid'}.`
    : 'The admin token is missing or wrong.';

/** Every item of a paged list (`limit` and `nextCursor`, docs/delivery-log.md, "API"): `key` names the list. */
export async function allPages(path, key) {
  const items = [];
  let cursor = null;
  do {
    const page = await api(`${path}?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export const state = (s) => el('span', { class: `state state-${s}` }, s);
export const time = (iso) => el('time', { datetime: iso }, new Date(iso).toLocaleString());
export const msgLink = (m) =>
  el('a', { href: `#/message/${encodeURIComponent(m.sourceId)}/${encodeURIComponent(m.messageId)}` }, m.messageId);
export const batchLink = (batchId) =>
  batchId ? el('a', { href: `#/batch/${encodeURIComponent(batchId)}`, class: 'batch' }, batchId) : '';
export const result = (a) => [
  a.status ? `HTTP ${a.status}` : (a.error ?? ''),
  ' ',
  el('span', { class: 'muted' }, a.outcome),
];
export const pct = (x) => `${(x * 100).toFixed(1)} %`;
export const ms = (x) => (x === null ? '–' : `${Math.round(x)} ms`);

export function table(caption, headers, rows) {
  return el(
    'table',
    {},
    el('caption', { class: 'muted' }, caption),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        headers.map((h) => el('th', { scope: 'col' }, h)),
      ),
    ),
    el('tbody', {}, rows),
  );
}

export function show(title, ...content) {
  // Absent parts (no next page, no replays) are passed as null and left out.
  main.replaceChildren(el('h2', {}, title), ...content.filter((c) => c !== null && c !== undefined));
  document.title = `${title} · Sluice delivery log`;
}

/** An event of a message view: its JSON, or the text kept instead with the reason (docs/delivery-log.md). */
export function eventBlock(m) {
  if (m.eventText === null || m.eventText === undefined) return el('pre', {}, JSON.stringify(m.event, null, 2));
  return el('div', {}, el('p', { class: 'note' }, `Kept as text: ${m.eventNote}`), el('pre', {}, m.eventText));
}
