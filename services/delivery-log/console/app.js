// The delivery-log console: plain JavaScript modules, no build, no CDN (docs/delivery-log.md,
// "Console"). Every value from the log is written with textContent (ui.js): payloads are untrusted.

import {
  api,
  batchLink,
  el,
  enterSection,
  eventBlock,
  LeftSection,
  main,
  ms,
  msgLink,
  pct,
  report,
  result,
  say,
  show,
  state,
  table,
  time,
  TOKEN_KEY,
} from './ui.js';
import { actionsTable, destinationControl, endpointControl, RECENT_ACTIONS, testControl } from './control.js';
import { editDestinationPage, newDestinationPage } from './destination-form.js';
import { ledgerPage } from './ledger.js';
import { rotateSecretPage } from './rotate.js';
import { definitionsById, originLine } from './origin.js';
import { enterPortal, isPortal, portalExpired, portalRefusedPage, takePortalLink } from './portal.js';

let timer;

async function destinationsPage() {
  const [{ destinations }, definitions, { actions }] = await Promise.all([
    api('/api/v1/destinations'),
    definitionsById(),
    api(`/api/v1/destination-actions?limit=${RECENT_ACTIONS}`),
  ]);
  const sections = [];
  for (const d of destinations) {
    const health = await api(`/api/v1/destinations/${encodeURIComponent(d.id)}/health`);
    const byUrl = new Map(health.endpoints.map((h) => [h.endpoint, h]));
    const counts = Object.entries(d.states).map(([s, n]) => el('li', {}, state(s), ` ${n}`));
    sections.push(
      el(
        'section',
        { 'aria-labelledby': `dest-${d.id}` },
        el('h3', { id: `dest-${d.id}` }, `${d.name} (${d.id})`, d.enabled ? '' : ' — disabled'),
        el('p', { class: 'muted' }, `Sources: ${d.sourceIds.join(', ') || 'none'}`),
        originLine(definitions.get(d.id), destinationsPage),
        destinationControl(d, destinationsPage),
        el('ul', { class: 'counts' }, counts),
        table(
          `Endpoint health over the last ${Math.round(health.windowMs / 60000)} minutes`,
          ['Endpoint', 'Attempts', 'Success', 'p50', 'p95', 'Last error', 'State', 'Control', 'Test'],
          d.endpoints.map((url, index) => {
            const h = byUrl.get(url);
            return el(
              'tr',
              {},
              el('td', {}, url),
              el('td', { class: 'num' }, h ? h.attempts : 0),
              el('td', { class: 'num' }, h ? pct(h.successRate) : '–'),
              el('td', { class: 'num' }, h ? ms(h.p50LatencyMs) : '–'),
              el('td', { class: 'num' }, h ? ms(h.p95LatencyMs) : '–'),
              el(
                'td',
                {},
                h?.lastError ? [time(h.lastError.at), ' ', h.lastError.error ?? `HTTP ${h.lastError.status}`] : '–',
              ),
              ...endpointControl(d, url, destinationsPage),
              testControl(d, index, url),
            );
          }),
        ),
      ),
    );
  }
  show(
    'Destinations',
    isPortal() ? null : el('p', {}, el('a', { class: 'button', href: '#/destinations/new' }, 'New destination')),
    ...(sections.length ? sections : [el('p', {}, 'No destinations are configured.')]),
    actionsTable(actions),
  );
}

async function streamPage(sourceId) {
  const form = el(
    'form',
    {
      class: 'filters',
      onsubmit: (e) => (e.preventDefault(), (location.hash = `#/stream/${encodeURIComponent(form.source.value)}`)),
    },
    el('label', {}, 'Source', el('input', { name: 'source', value: sourceId ?? '', required: true, maxlength: 200 })),
    el('button', { type: 'submit' }, 'Watch'),
  );
  const list = el('ol', { class: 'stream', 'aria-live': 'polite', 'aria-label': 'Newest events first' });
  show('Live events', form, list);
  if (!sourceId) return;
  const refresh = async () => {
    const { events } = await api(`/api/v1/sources/${encodeURIComponent(sourceId)}/events?limit=20`);
    list.replaceChildren(
      ...events.map((e) =>
        el(
          'li',
          {},
          el('p', {}, time(e.receivedAt), ' ', e.eventType, ' ', msgLink({ sourceId, messageId: e.messageId })),
          eventBlock(e),
        ),
      ),
    );
  };
  await refresh();
  timer = setInterval(() => refresh().catch(report), 2000);
}

const STATES = ['delivering', 'waiting', 'retrying', 'delivered', 'filtered', 'dead', 'rejected'];

async function messagesPage(params, { title = 'Messages', bulk = false } = {}) {
  const q = new URLSearchParams(params);
  const field = (name, label, extra = {}) =>
    el('label', {}, label, el('input', { name, value: q.get(name) ?? '', maxlength: 200, ...extra }));
  const select = el(
    'select',
    { name: 'state' },
    el('option', { value: '' }, 'any'),
    STATES.map((s) => el('option', { value: s, selected: q.get('state') === s }, s)),
  );
  const form = el(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Message search',
      onsubmit: (e) => {
        e.preventDefault();
        const next = new URLSearchParams();
        for (const [k, v] of new FormData(form)) if (v) next.set(k, String(v));
        location.hash = `${bulk ? '#/dead' : '#/messages'}?${next}`;
      },
    },
    field('messageId', 'Message id'),
    field('sourceId', 'Source'),
    field('destinationId', 'Destination'),
    bulk ? null : el('label', {}, 'State', select),
    field('since', 'Received since', { type: 'datetime-local' }),
    el('button', { type: 'submit' }, 'Search'),
  );
  const query = new URLSearchParams(q);
  if (bulk) query.set('state', 'dead');
  if (query.get('since')) query.set('since', new Date(query.get('since')).toISOString());
  const page = await api(`/api/v1/messages?${query}`);
  const rows = page.messages.map((m) =>
    el(
      'tr',
      {},
      el('td', {}, msgLink(m)),
      el('td', {}, m.sourceId),
      el('td', {}, m.eventType),
      el('td', {}, time(m.receivedAt)),
      el(
        'td',
        {},
        m.deliveries.map((d) => el('span', {}, d.destinationId ?? '(none)', ' ', state(d.state), ' ')),
      ),
    ),
  );
  const more = page.nextCursor
    ? el(
        'a',
        {
          href: `${bulk ? '#/dead' : '#/messages'}?${new URLSearchParams({ ...Object.fromEntries(q), cursor: page.nextCursor })}`,
        },
        'Next page',
      )
    : null;
  const replayAll = bulk
    ? el(
        'button',
        {
          type: 'button',
          onclick: async () => {
            const filter = {};
            if (q.get('sourceId')) filter.sourceId = q.get('sourceId');
            if (q.get('destinationId')) filter.destinationId = q.get('destinationId');
            const r = await api('/api/v1/replays', { method: 'POST', body: JSON.stringify(filter) }).catch(report);
            if (r) say(`Replayed ${r.replayed} dead letters (${r.skippedAlreadyReplayed} already replayed).`);
          },
        },
        'Replay all matching dead letters',
      )
    : null;
  show(
    title,
    form,
    replayAll,
    table(
      `${page.messages.length} messages, newest first`,
      ['Message', 'Source', 'Type', 'Received', 'Deliveries'],
      rows,
    ),
    more,
  );
}

async function messagePage(sourceId, messageId) {
  const m = await api(`/api/v1/messages/${encodeURIComponent(sourceId)}/${encodeURIComponent(messageId)}`);
  const replay = el(
    'button',
    {
      type: 'button',
      id: 'replay',
      onclick: async () => {
        replay.disabled = true;
        try {
          const r = await api(
            `/api/v1/messages/${encodeURIComponent(sourceId)}/${encodeURIComponent(messageId)}/replay`,
            { method: 'POST' },
          );
          say(`Replayed to ${r.replayed} destination(s); new attempts appear below.`);
          const before = m.totals.attempts;
          const poll = async () => {
            const now = await api(`/api/v1/messages/${encodeURIComponent(sourceId)}/${encodeURIComponent(messageId)}`);
            if (now.totals.attempts > before) return route();
            timer = setTimeout(() => poll().catch(report), 500);
          };
          await poll();
        } catch (err) {
          report(err);
          replay.disabled = false;
        }
      },
    },
    'Replay',
  );
  const canReplay = m.deliveries.some((d) => d.state === 'dead' || d.state === 'delivered');
  show(
    `Message ${messageId}`,
    el('p', {}, `Source ${sourceId} · ${m.eventType} · received `, time(m.receivedAt)),
    m.traceId ? el('p', {}, 'Trace ', el('code', { 'data-trace-id': '' }, m.traceId)) : null,
    canReplay ? replay : el('p', { class: 'muted' }, 'Replay is possible once a delivery is dead or delivered.'),
    el('h3', {}, 'Deliveries'),
    table(
      'State per destination',
      ['Destination', 'State', 'Since', 'Attempts', 'Last error'],
      m.deliveries.map((d) =>
        el(
          'tr',
          {},
          el('td', {}, d.destinationId ?? '(none)'),
          el('td', {}, state(d.state)),
          el('td', {}, time(d.stateAt)),
          el('td', { class: 'num' }, d.attempts),
          el(
            'td',
            {},
            d.reject
              ? `${d.reject.code}: ${d.reject.message} (${d.reject.origin})`
              : (d.deadReason ? `${d.deadReason}; ` : '') + (d.lastError ?? ''),
          ),
        ),
      ),
    ),
    el('h3', {}, 'Attempts'),
    table(
      m.attempts.length < m.totals.attempts
        ? `The newest ${m.attempts.length} of ${m.totals.attempts} attempts, oldest first`
        : `${m.attempts.length} attempts, oldest first`,
      ['#', 'Time', 'Destination', 'Endpoint', 'Result', 'Latency', 'Response', 'Batch'],
      m.attempts.map((a) =>
        el(
          'tr',
          { class: 'attempt' },
          el('td', { class: 'num' }, a.attempt),
          el('td', {}, time(a.at)),
          el('td', {}, a.destinationId),
          el('td', {}, a.endpoint),
          el('td', {}, result(a)),
          el('td', { class: 'num' }, ms(a.latencyMs)),
          el('td', {}, a.responseSnippet ?? ''),
          el('td', {}, batchLink(a.batchId)),
        ),
      ),
    ),
    m.replays.length ? el('h3', {}, 'Replays') : null,
    m.replays.length
      ? el(
          'ul',
          {},
          m.replays.map((r) =>
            el(
              'li',
              {},
              time(r.requestedAt),
              ` to ${r.destinationId ?? 'all'}: ${r.replayed} re-injected${r.bulk ? ' (replay of dead letters in bulk)' : ''}`,
            ),
          ),
        )
      : null,
    el('h3', {}, 'Event'),
    eventBlock(m),
    ...m.rejectedValues.map((v) => el('pre', { 'aria-label': 'Rejected call' }, v)),
    m.rejectedValues.length < m.totals.rejectedValues
      ? el(
          'p',
          { class: 'muted' },
          `The first ${m.rejectedValues.length} of ${m.totals.rejectedValues} rejected calls.`,
        )
      : null,
  );
}

/** The events one batched request carried: each one's attempt in it and its state now. */
async function batchPage(batchId) {
  const b = await api(`/api/v1/batches/${encodeURIComponent(batchId)}`);
  const size = b.batchSize === null ? '' : `${b.batchSize} events sent · `;
  show(
    `Batch ${batchId}`,
    el('p', {}, `${size}${b.totals.events} events and ${b.totals.attempts} attempts in the log`),
    table(
      b.events.length < b.totals.attempts
        ? `The first ${b.events.length} of ${b.totals.attempts} attempts, oldest first`
        : `${b.events.length} attempts, oldest first`,
      ['Message', 'Destination', 'State now', 'Endpoint', '#', 'Time', 'Result'],
      b.events.map((e) =>
        el(
          'tr',
          { class: 'batch-event' },
          el('td', {}, msgLink(e)),
          el('td', {}, e.destinationId),
          el('td', {}, e.state ? state(e.state) : '–'),
          el('td', {}, e.endpoint),
          el('td', { class: 'num' }, e.attempt),
          el('td', {}, time(e.at)),
          el('td', {}, result(e)),
        ),
      ),
    ),
  );
}

async function route() {
  enterSection();
  clearInterval(timer);
  clearTimeout(timer);
  const [path, query = ''] = location.hash.slice(1).split('?');
  const parts = (path || '/').split('/').filter(Boolean).map(decodeURIComponent);
  // A message or batch belongs to Messages, a destination's form to Destinations.
  const current = ['message', 'batch'].includes(parts[0]) ? 'messages' : parts[0] === 'destinations' ? '' : parts[0];
  for (const a of document.querySelectorAll('nav a')) {
    const target = a.getAttribute('href').slice(2);
    if ((current ?? '') === target) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (portalExpired()) return portalRefusedPage('The portal link has expired.');
  if (!sessionStorage.getItem(TOKEN_KEY)) {
    show('Sign in', el('p', {}, 'Enter the admin token (deliveryLog.adminToken) above to use the console.'));
    document.getElementById('token').focus();
    return;
  }
  try {
    if (parts[0] === 'stream') await streamPage(parts[1]);
    else if (parts[0] === 'messages') await messagesPage(query);
    else if (parts[0] === 'ledger' && !isPortal()) await ledgerPage(query);
    else if (parts[0] === 'dead') await messagesPage(query, { title: 'Dead letters', bulk: true });
    else if (parts[0] === 'message' && parts.length === 3) await messagePage(parts[1], parts[2]);
    else if (parts[0] === 'batch' && parts.length === 2) await batchPage(parts[1]);
    else if (parts[0] === 'destinations' && parts[1] === 'new' && !isPortal()) await newDestinationPage();
    else if (parts[0] === 'destinations' && parts[2] === 'edit') await editDestinationPage(parts[1]);
    else if (parts[0] === 'destinations' && parts[2] === 'rotate') await rotateSecretPage(parts[1]);
    else await destinationsPage();
  } catch (err) {
    if (err instanceof LeftSection) return;
    if (isPortal() && err.status === 401) return portalRefusedPage(err.message);
    show('Something went wrong', el('p', { class: 'error', role: 'alert' }, err.message));
  }
}

document.getElementById('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value);
  document.getElementById('token').value = '';
  say('Token saved for this tab.');
  route();
});
window.addEventListener('hashchange', () => {
  // A link opened in a tab already showing the console.
  if (location.hash.startsWith('#portal=')) return takePortalLink(), enterPortal(), route();
  route().then(() => main.focus());
});
takePortalLink();
enterPortal();
route();
