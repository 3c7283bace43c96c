import type { SluiceConfig } from '@sluice/config';
import type { SigningKey } from '@sluice/webhook-signature';

/** The operator events (docs/reference/operator-events.md): their `type`, and what each carries besides `type` and `at`. */
export type OperatorEvent =
  | {
      type: `${'destination' | 'endpoint'}.${'paused' | 'resumed' | 'disabled' | 'enabled'}`;
      destinationId: string;
      endpointRef?: string;
      reason: string;
      by: string;
      auto?: true;
    }
  | { type: 'destination.dead_letter_burst'; destinationId: string; deadLetters: number; windowSeconds: number }
  | { type: 'destination.filter_refuses_all'; destinationId: string; refused: number }
  | {
      type: 'signing_secret.expiring';
      destinationId: string;
      scheme: 'x-signature' | 'standard-webhooks';
      index: number;
      notAfter: string;
    };

const BURST_WINDOW_MS = 60_000;

/**
 * Dead letters per destination in the current minute: `add` answers true once per minute when the
 * count passes `limit` (one burst event a minute at most per destination).
 */
export class DeadLetterBursts {
  readonly #windows = new Map<string, { start: number; count: number; told: boolean }>();
  readonly windowSeconds = BURST_WINDOW_MS / 1_000;

  add(destinationId: string, now: number, limit: number): number | undefined {
    let w = this.#windows.get(destinationId);
    if (w === undefined || now - w.start >= BURST_WINDOW_MS) {
      w = { start: now, count: 0, told: false };
      this.#windows.set(destinationId, w);
    }
    w.count += 1;
    if (w.told || w.count <= limit) return undefined;
    w.told = true;
    return w.count;
  }
}

/** Consecutive events a destination's filter refused: `verdict` answers true when the streak reaches `limit`. */
export class RefusalStreaks {
  readonly #streaks = new Map<string, number>();

  verdict(destinationId: string, refused: boolean, limit: number): boolean {
    if (!refused) {
      this.#streaks.delete(destinationId);
      return false;
    }
    const n = (this.#streaks.get(destinationId) ?? 0) + 1;
    this.#streaks.set(destinationId, n);
    return n === limit;
  }
}

/** Signing keys of the config whose `notAfter` falls within `noticeMs` from `now` (not yet passed). */
export function expiringKeys(config: SluiceConfig, now: number, noticeMs: number) {
  const out: Extract<OperatorEvent, { type: 'signing_secret.expiring' }>[] = [];
  const scan = (destinationId: string, scheme: 'x-signature' | 'standard-webhooks', keys: SigningKey[]) =>
    keys.forEach((k, index) => {
      if (k.notAfter !== undefined && k.notAfter > now && k.notAfter - now <= noticeMs)
        out.push({
          type: 'signing_secret.expiring',
          destinationId,
          scheme,
          index,
          notAfter: new Date(k.notAfter).toISOString(),
        });
    });
  for (const d of config.destinations) {
    scan(d.id, 'x-signature', d.signing.xSignatureKeys);
    scan(d.id, 'standard-webhooks', d.signing.standardWebhooksKeys);
  }
  return out;
}
