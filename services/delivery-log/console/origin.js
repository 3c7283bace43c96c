// Where a destination on the Destinations page comes from (docs/delivery-log.md, "Console"): the
// config file (read-only here) or the runtime catalog, whose destinations are edited, have their
// signing secret rotated and are deleted through the runtime destinations' routes
// (docs/reference/runtime-destinations.md, "API").

import { isPortal } from './portal.js';
import { allPages, api, el, say, time } from './ui.js';

/** Every destination's definition item (`origin`, and for a runtime one its version), by id. */
export async function definitionsById() {
  const items = await allPages('/api/v1/destination-definitions', 'definitions');
  return new Map(items.map((d) => [d.id, d]));
}

/** Delete, after a confirmation in place; the deletion names the version it was shown at (`If-Match`). */
function deleteControl(item, done) {
  const box = el('span', { class: 'delete-control' });
  const ask = el('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${item.id}` }, 'Delete');
  const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const confirm = el('button', { type: 'button', class: 'danger' }, `Yes, delete ${item.id}`);
  const question = el(
    'span',
    { role: 'group', 'aria-label': `Confirm deleting ${item.id}`, class: 'confirm' },
    `Delete ${item.id}? It gets no more events; those on their way to it are dead-lettered (destination_deleted). `,
    confirm,
    ' ',
    cancel,
  );
  ask.addEventListener('click', () => {
    box.replaceChildren(question);
    cancel.focus();
  });
  cancel.addEventListener('click', () => {
    box.replaceChildren(ask);
    ask.focus();
  });
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      await api(`/api/v1/destination-definitions/${encodeURIComponent(item.id)}`, {
        method: 'DELETE',
        headers: { 'if-match': `"${item.version}"` },
      });
      say(`Deleted ${item.id}.`);
      await done();
    } catch (err) {
      say(err.message);
      confirm.disabled = false;
    }
  });
  box.append(ask);
  return box;
}

/**
 * The destination's origin line: the config file it is declared in, or the runtime catalog with its
 * version and last change, Edit, Rotate secret and Delete. `done` reloads the page after a deletion.
 */
export function originLine(item, done) {
  if (item === undefined) return null;
  if (item.origin === 'file')
    return el('p', {}, 'From the config file ', el('code', {}, item.file), ', read-only here.');
  return el(
    'div',
    { class: 'origin' },
    el(
      'span',
      {},
      `Runtime destination, version ${item.version}, changed `,
      time(item.updatedAt),
      ` by ${item.updatedBy}`,
    ),
    el(
      'a',
      { class: 'button', href: `#/destinations/${encodeURIComponent(item.id)}/edit`, 'aria-label': `Edit ${item.id}` },
      'Edit',
    ),
    el(
      'a',
      {
        class: 'button',
        href: `#/destinations/${encodeURIComponent(item.id)}/rotate`,
        'aria-label': `Rotate the signing secret of ${item.id}`,
      },
      'Rotate secret',
    ),
    // Deleting a destination is the operator's, not a portal's.
    isPortal() ? null : deleteControl(item, done),
  );
}
