/** Turns a JSON pointer (`/destinations/0/settings`) into a field path (`destinations[0].settings`). */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const raw of parts) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out === '' ? '(root)' : out;
}

/**
 * A field below `base` (`destinations[0]` + `settings.webhooks` → `destinations[0].settings.webhooks`);
 * an empty `base` is the root of what is validated (one destination on its own: `settings.webhooks`).
 */
export function subField(base: string, field: string): string {
  return base === '' ? field : `${base}.${field}`;
}
