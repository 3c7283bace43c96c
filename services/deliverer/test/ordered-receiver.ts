import { type ReceivedRequest, type Reply, startReceiver } from '@sluice/testkit';

// A receiver of per-user order's tests (docs/reference/ordering.md): it fails what it is told to and
// records the order in which it first answered 2xx per message id — what a receiver
// de-duplicating on X-Message-Id applied.

/** A message id the receiver applied, and when. */
export interface Applied {
  id: string;
  at: number;
}

/** A receiver that fails what `fail` says and records the first 2xx per message id. */
export async function orderedReceiver(fail: (id: string, tries: number) => boolean) {
  const applied: Applied[] = [];
  const tries = new Map<string, number>();
  const firstTry = new Map<string, number>();
  const receiver = await startReceiver({
    behaviour: (req: ReceivedRequest): Reply => {
      const id = String(req.headers['x-message-id']);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      if (!firstTry.has(id)) firstTry.set(id, req.at);
      if (fail(id, n)) return { status: 503 };
      if (!applied.some((a) => a.id === id)) applied.push({ id, at: req.at });
      return { status: 200 };
    },
  });
  return { receiver, applied, tries, firstTry };
}

/** The order a user's events were first applied in. */
export const appliedOf = (applied: Applied[], prefix: string) =>
  applied.filter((a) => a.id.startsWith(prefix)).map((a) => a.id);
