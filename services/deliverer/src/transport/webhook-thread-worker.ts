// The webhook thread's entry point: owns the undici pools (an `UndiciWebhookClient`) so that
// writing requests and parsing responses run beside, not inside, the deliverer's main thread.
// Messages from the parent: settings, send (a batch of requests), close; replies: results
// (a batch), closed. Requests and results travel in batches, one message per event-loop turn.
import { parentPort } from 'node:worker_threads';
import { AddressPolicy } from '@sluice/webhook';
import type { AttemptResult } from './attempt-result.ts';
import { TurnBatch } from './turn-batch.ts';
import { UndiciWebhookClient, type PoolSettings, type WebhookRequest } from './webhook-client.ts';

/** What the thread needs of the config; sent at start and again after every reload. */
export interface WebhookThreadSettings {
  pool: PoolSettings;
  ssrf: { enabled: boolean; allowCidrs: string[] };
  /** Origins of every configured endpoint: pools of other origins are closed. */
  origins: string[];
}

export interface ThreadRequest extends WebhookRequest {
  id: number;
}

export type ToWebhookThread =
  | { kind: 'settings'; settings: WebhookThreadSettings }
  | { kind: 'send'; requests: ThreadRequest[] }
  | { kind: 'close' };
/** A result, or (never expected: the client classifies every fault) the error that escaped it. */
export type ThreadResult = [id: number, result: AttemptResult] | [id: number, result: null, error: string];
export type FromWebhookThread = { kind: 'results'; results: ThreadResult[] } | { kind: 'closed' };

const port = parentPort!;
let settings: WebhookThreadSettings | undefined;
let policy: AddressPolicy | undefined;
const client = new UndiciWebhookClient({ settings: () => settings!.pool, policy: () => policy! });

const done = new TurnBatch<ThreadResult>((results) =>
  port.postMessage({ kind: 'results', results } satisfies FromWebhookThread),
);

port.on('message', (msg: ToWebhookThread) => {
  if (msg.kind === 'send') {
    for (const r of msg.requests) {
      // Structured clone turned the body into a plain Uint8Array.
      const body = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength);
      const request = {
        url: r.url,
        headers: r.headers,
        body,
        timeoutMs: r.timeoutMs,
        readAnswer: r.readAnswer === true,
      };
      client.send(request).then(
        (result) => done.push([r.id, result]),
        (err: unknown) => done.push([r.id, null, (err as Error)?.stack ?? String(err)]),
      );
    }
  } else if (msg.kind === 'settings') {
    // The main thread built the same policy before sending these settings; should it fail here
    // anyway, the thread keeps the settings it has rather than end (a throw here would kill it).
    let next: AddressPolicy;
    try {
      next = new AddressPolicy(msg.settings.ssrf);
    } catch {
      if (settings) return;
      throw new Error('webhook thread: the first settings carry an unusable SSRF allow-list');
    }
    settings = msg.settings;
    policy = next;
    void client.retain(new Set(msg.settings.origins));
  } else if (msg.kind === 'close') {
    void client.close().then(() => {
      done.flush();
      port.postMessage({ kind: 'closed' } satisfies FromWebhookThread);
      port.close();
    });
  }
});
