// Destination control in the console (docs/reference/destination-actions.md): the runtime state of
// a destination or an endpoint, and the actions on it, each with a reason; a test event sent to an
// endpoint (docs/reference/runtime-destinations.md, "Test event").

import { api, el, ms, say, state, table, time } from './ui.js';

/** The actions offered in each state: what a paused or disabled destination or endpoint can do next. */
const NEXT = {
  active: ['pause', 'disable'],
  paused: ['resume', 'disable'],
  disabled: ['enable'],
};
const LABEL = { pause: 'Pause', resume: 'Resume', disable: 'Disable', enable: 'Enable' };

/** "paused since … by ana: maintenance" (or just the state when it was never set). */
export function stateText(s) {
  if (s.since === null) return [state(s.state)];
  return [
    state(s.state),
    s.auto ? ' (auto)' : '',
    ' since ',
    time(s.since),
    ` by ${s.by}: `,
    el('span', { class: 'reason' }, s.reason),
  ];
}

/**
 * A small form: the reason (required) and one button per action the state allows. `path` is the
 * API path of the destination or endpoint; `label` names it for screen readers; `done` reloads.
 */
export function controlForm(path, label, s, done) {
  const input = el('input', { name: 'reason', type: 'text', required: true, 'aria-label': `Reason (${label})` });
  const form = el('form', { class: 'control', 'aria-label': `Control ${label}` }, input);
  let chosen;
  for (const action of NEXT[s.state] ?? []) {
    form.append(
      el(
        'button',
        { type: 'submit', onclick: () => (chosen = action), 'aria-label': `${LABEL[action]} ${label}` },
        LABEL[action],
      ),
    );
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const action = chosen ?? NEXT[s.state][0];
    try {
      const answer = await api(`${path}/${action}`, {
        method: 'POST',
        body: JSON.stringify({ reason: input.value }),
      });
      say(`${label}: ${answer.state}`);
      await done();
    } catch (err) {
      say(err.message);
    }
  });
  return form;
}

/** The destination's line: its state and its form. */
export function destinationControl(d, done) {
  const path = `/api/v1/destinations/${encodeURIComponent(d.id)}`;
  return el(
    'div',
    { class: 'destination-state' },
    el('p', {}, 'State: ', ...stateText(d.state)),
    controlForm(path, d.id, d.state, done),
  );
}

/** An endpoint's state cell and form cell, for the endpoint table. */
export function endpointControl(d, ref, done) {
  const s = d.endpointStates?.find((e) => e.ref === ref) ?? { state: 'active', since: null };
  const path = `/api/v1/destinations/${encodeURIComponent(d.id)}/endpoints/${encodeURIComponent(ref)}`;
  return [el('td', { class: 'endpoint-state' }, ...stateText(s)), el('td', {}, controlForm(path, ref, s, done))];
}

/** The newest actions a page of destinations lists (docs/reference/destination-actions.md, "Recorded actions"). */
export const RECENT_ACTIONS = 20;

/** The newest actions the caller sees, newest first: who did each by token name and id, and why. */
export function actionsTable(actions) {
  return el(
    'section',
    { 'aria-labelledby': 'recent-actions' },
    el('h3', { id: 'recent-actions' }, 'Recent actions'),
    actions.length === 0
      ? el('p', { class: 'muted' }, 'No action recorded.')
      : table(
          `The newest ${RECENT_ACTIONS} actions (GET /api/v1/destination-actions for all)`,
          ['When', 'Destination', 'Endpoint', 'Action', 'By', 'Token id', 'Reason'],
          actions.map((a) =>
            el(
              'tr',
              { class: 'action' },
              el('td', {}, time(a.at)),
              el('td', {}, a.destinationId),
              el('td', {}, a.endpointRef ?? '–'),
              el('td', {}, a.action, a.auto ? ' (auto)' : ''),
              el('td', {}, a.by),
              el('td', { class: 'token-id' }, a.byTokenId ?? '–'),
              el('td', { class: 'reason' }, a.reason),
            ),
          ),
        ),
  );
}

/** What a test answered: the status and latency (or why no answer came), and the answer's first bytes. */
function testResult(r) {
  const line =
    r.status === null ? `No answer after ${ms(r.latencyMs)}: ${r.error}` : `HTTP ${r.status} in ${ms(r.latencyMs)}`;
  const bytes = r.body ? el('pre', { class: 'test-answer' }, r.truncated ? `${r.body} …` : r.body) : '';
  return [el('p', {}, line, r.ok ? '' : ' (not a 2xx)'), bytes];
}

/** An endpoint's test cell: a button that sends it one test event (`index`: its place in the destination), and the answer. */
export function testControl(d, index, ref) {
  const out = el('output', { class: 'test-result', 'aria-live': 'polite' });
  const button = el('button', { type: 'button', 'aria-label': `Send a test event to ${ref}` }, 'Send test event');
  button.addEventListener('click', async () => {
    button.disabled = true;
    out.replaceChildren('Sending…');
    try {
      const r = await api(`/api/v1/destination-definitions/${encodeURIComponent(d.id)}/test`, {
        method: 'POST',
        body: JSON.stringify({ endpoint: index }),
      });
      out.replaceChildren(...testResult(r));
    } catch (err) {
      out.replaceChildren(err.message);
    } finally {
      button.disabled = false;
    }
  });
  return el('td', { class: 'endpoint-test' }, button, out);
}
