// The ledger in the console (docs/delivery-log.md, "Ledger"): per source and destination, what was
// accepted in a time range and how each delivery stands, and the deliveries unaccounted for now.

import { api, el, msgLink, show, state, table, time } from './ui.js';

const FIGURES = ['accepted', 'delivered', 'filtered', 'dead', 'inFlight', 'parked', 'unaccounted'];
const LABELS = ['Accepted', 'Delivered', 'Filtered', 'Dead', 'In flight', 'Parked', 'Unaccounted'];
const HOURS = [1, 6, 24, 168];

const age = (s) =>
  s === null ? '–' : s < 120 ? `${s} s` : s < 7200 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;

/** `#/ledger?hours=N`: the totals over the last N hours, and the unaccounted deliveries. */
export async function ledgerPage(params) {
  const q = new URLSearchParams(params);
  const hours = HOURS.includes(Number(q.get('hours'))) ? Number(q.get('hours')) : 1;
  const to = Date.now();
  const from = to - hours * 3_600_000;
  const [ledger, open] = await Promise.all([
    api(`/api/v1/ledger?from=${from}&to=${to}&bucket=${hours > 24 ? '24h' : '1h'}`),
    api('/api/v1/ledger/unaccounted?limit=200'),
  ]);
  const range = el(
    'select',
    {
      name: 'hours',
      'aria-label': 'Received in the last',
      onchange: (e) => (location.hash = `#/ledger?hours=${e.target.value}`),
    },
    HOURS.map((h) => el('option', { value: h, selected: h === hours }, h < 24 ? `${h} h` : `${h / 24} d`)),
  );
  show(
    'Ledger',
    el('label', {}, 'Events received in the last ', range),
    table(
      `Per source and destination, ${new Date(ledger.from).toLocaleString()} – ${new Date(ledger.to).toLocaleString()}`,
      ['Source', 'Destination', ...LABELS, 'Oldest unsettled'],
      ledger.totals.map((t) =>
        el(
          'tr',
          { class: t.unaccounted > 0 ? 'ledger-row unaccounted' : 'ledger-row' },
          el('td', {}, t.sourceId),
          el('td', {}, t.destinationId),
          ...FIGURES.map((f) => el('td', { class: 'num', 'data-figure': f }, t[f])),
          el('td', { class: 'num' }, age(t.oldestUnsettledAgeSeconds)),
        ),
      ),
    ),
    ledger.totals.length ? null : el('p', { class: 'muted' }, 'No events were received in this range.'),
    el('h3', { id: 'unaccounted' }, `Unaccounted now: ${open.total}`),
    el(
      'p',
      { class: 'muted' },
      'Not delivered, filtered or dead-lettered, and no longer in the retry path: the retry window, with the grace, ran out before ',
      time(open.unaccountedBefore),
      ' (deliveries to a paused or disabled destination are parked, not unaccounted).',
    ),
    open.total
      ? table(
          open.unaccounted.length < open.total
            ? `The first ${open.unaccounted.length} of ${open.total}, longest unaccounted first`
            : 'Longest unaccounted first',
          ['Message', 'Destination', 'Last state', 'Since', 'Attempts', 'Last error', 'Why'],
          open.unaccounted.map((u) =>
            el(
              'tr',
              { class: 'unaccounted-delivery' },
              el('td', {}, msgLink(u)),
              el('td', {}, u.destinationId),
              el('td', {}, state(u.state)),
              el('td', {}, time(u.stateAt)),
              el('td', { class: 'num' }, u.attempts),
              el('td', {}, u.lastError ?? '–'),
              el('td', { title: u.message }, u.reason),
            ),
          ),
        )
      : null,
  );
}
