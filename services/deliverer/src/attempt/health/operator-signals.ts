import type { SluiceConfig } from '@sluice/config';
import type { SigningKey } from '@sluice/webhook-signature';
import type { FilterVerdict } from '../../intake/filter-routed.ts';
import { SECRET_CHECK_INTERVAL_MS } from '../../service/constants.ts';

/** The operator events (docs/reference/operator-events.md): their `type`, and what each carries besides `type` and `at`. */
export type OperatorEvent =
  | {
      type: `${'destination' | 'endpoint'}.${'paused' | 'resumed' | 'disabled' | 'enabled'}`;
      destinationId: string;
      endpointRef?: string;
      reason: string;
      /** The name of the token that acted (`sluice` for auto-disable). */
      by: string;
      /** Its id (`admin` for the config's admin token, `sluice` for auto-disable); absent from actions recorded before ids. */
      byTokenId?: string;
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

/** Queues an operator event; `at` (ISO) is when its fact happened, default now (`OperatorOutbox.send`). */
export type TellOperator = (event: OperatorEvent, at?: string) => void;

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

  verdict(verdict: FilterVerdict, limit: number): boolean {
    const { destinationId } = verdict;
    if (!verdict.refused) {
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

export interface OperatorSignalsDeps {
  config: () => SluiceConfig;
  now: () => number;
  tell: TellOperator;
}

/**
 * The operator events of what the deliveries see (docs/reference/operator-events.md): dead-letter
 * bursts, a filter refusing every event, and signing secrets about to expire (checked at start and
 * every 15 minutes). Nothing is counted while `operatorEvents` is absent.
 */
export class OperatorSignals {
  readonly #deps: OperatorSignalsDeps;
  readonly #bursts = new DeadLetterBursts();
  readonly #refusals = new RefusalStreaks();
  readonly #expiryTold = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: OperatorSignalsDeps) {
    this.#deps = deps;
  }

  /** Checks the signing secrets now and every 15 minutes. */
  start(): void {
    this.checkSecrets();
    this.#timer = setInterval(() => this.checkSecrets(), SECRET_CHECK_INTERVAL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  deadLettered(destinationId: string): void {
    const settings = this.#deps.config().operatorEvents;
    if (settings === undefined) return;
    const count = this.#bursts.add(destinationId, this.#deps.now(), settings.deadLetterBurst);
    if (count !== undefined)
      this.#deps.tell({
        type: 'destination.dead_letter_burst',
        destinationId,
        deadLetters: count,
        windowSeconds: this.#bursts.windowSeconds,
      });
  }

  filtered(verdict: FilterVerdict): void {
    const settings = this.#deps.config().operatorEvents;
    if (settings === undefined) return;
    if (this.#refusals.verdict(verdict, settings.filterRefusesAll))
      this.#deps.tell({
        type: 'destination.filter_refuses_all',
        destinationId: verdict.destinationId,
        refused: settings.filterRefusesAll,
      });
  }

  /** Sends `signing_secret.expiring` for each key newly within the notice. */
  checkSecrets(): void {
    const config = this.#deps.config();
    const settings = config.operatorEvents;
    if (settings === undefined) return;
    for (const event of expiringKeys(config, this.#deps.now(), settings.secretExpiryNoticeMs)) {
      const key = `${event.destinationId}/${event.scheme}/${event.index}/${event.notAfter}`;
      if (this.#expiryTold.has(key)) continue;
      this.#expiryTold.add(key);
      this.#deps.tell(event);
    }
  }
}
