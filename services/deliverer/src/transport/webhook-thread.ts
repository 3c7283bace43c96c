import { Worker } from 'node:worker_threads';
import type { AttemptResult } from './attempt-result.ts';
import { TurnBatch } from './turn-batch.ts';
import type { WebhookClient, WebhookRequest } from './webhook-client.ts';
import type {
  FromWebhookThread,
  ThreadRequest,
  ToWebhookThread,
  WebhookThreadSettings,
} from './webhook-thread-worker.ts';

export type { WebhookThreadSettings } from './webhook-thread-worker.ts';

/** The webhook thread ended, or a request failed in a way the client does not classify. */
export class WebhookThreadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookThreadError';
  }
}

interface Pending {
  resolve(result: AttemptResult): void;
  reject(err: Error): void;
}

/**
 * A `WebhookClient` whose requests run in a worker thread that owns the undici pools (the same
 * `UndiciWebhookClient`: TLS, SSRF guard, deadlines, 64 KB body cap). Writing a request and
 * parsing its response is about a third of a delivery's CPU; on its own thread it runs beside
 * the consuming, decoding, rendering, signing and attempt records of the main thread, whose
 * event-loop turns (each connection completes at most one request per turn) get shorter.
 * Requests and results cross in batches, one message per event-loop turn each way. If the
 * thread dies, every pending request rejects and `died` resolves (fatal for the service).
 */
export class WebhookThread implements WebhookClient {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  readonly #outbox = new TurnBatch<ThreadRequest>((requests) =>
    this.#post({ kind: 'send', requests }, moved(requests)),
  );
  #dead: Error | undefined;
  #closing = false;
  #closed: (() => void) | undefined;
  #onDeath!: (err: Error) => void;
  /** Resolves if the thread ends other than through `close()`. */
  readonly died = new Promise<Error>((resolve) => (this.#onDeath = resolve));

  constructor(settings: WebhookThreadSettings) {
    this.#worker = new Worker(new URL('./webhook-thread-worker.ts', import.meta.url));
    this.#worker.on('message', (m: FromWebhookThread) => this.#onMessage(m));
    this.#worker.on('error', (err) => this.#die(err));
    this.#worker.on('exit', (code) => this.#die(new WebhookThreadError(`webhook thread exited (code ${code})`)));
    this.update(settings);
  }

  /** New settings (a config reload): they apply to requests sent after this call. */
  update(settings: WebhookThreadSettings): void {
    // Requests already handed in leave first, under the settings they were sent with.
    this.#outbox.flush();
    this.#post({ kind: 'settings', settings });
  }

  send(request: WebhookRequest): Promise<AttemptResult> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#closing) return Promise.reject(new WebhookThreadError('webhook thread is closing'));
    const id = this.#nextId++;
    return new Promise<AttemptResult>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#outbox.push({
        id,
        url: request.url,
        headers: request.headers,
        body: ownBody(request),
        timeoutMs: request.timeoutMs,
        ...(request.readAnswer === true && { readAnswer: true }),
      });
    });
  }

  /** Lets requests in flight finish (each has its deadline), closes the pools and ends the thread. */
  async close(): Promise<void> {
    if (this.#dead || this.#closing) return;
    this.#closing = true;
    this.#outbox.flush();
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      this.#post({ kind: 'close' });
    });
    await this.#worker.terminate();
  }

  #post(msg: ToWebhookThread, transfer: ArrayBuffer[] = []): void {
    if (!this.#dead) this.#worker.postMessage(msg, transfer);
  }

  #onMessage(m: FromWebhookThread): void {
    if (m.kind === 'closed') {
      this.#closed?.();
      return;
    }
    for (const [id, result, error] of m.results) {
      const entry = this.#pending.get(id);
      this.#pending.delete(id);
      if (!entry) continue;
      if (result) entry.resolve(result);
      else entry.reject(new WebhookThreadError(`request failed in the webhook thread: ${error}`));
    }
  }

  #die(err: Error): void {
    if (this.#dead) return;
    this.#dead = err;
    for (const entry of this.#pending.values()) entry.reject(err);
    this.#pending.clear();
    this.#closed?.();
    if (!this.#closing) this.#onDeath(err);
  }
}

/**
 * The body as the thread gets it, in memory of its own that moves there: a body handed over that
 * is all of its `ArrayBuffer` as it is, any other its own bytes copied. \`postMessage\` copies a
 * view's whole \`ArrayBuffer\`: a 600-byte body in Node's 64 KB Buffer pool, or a record's value in
 * a fetched Kafka batch of a megabyte, would otherwise cost that much per request, in copying on
 * this thread and in garbage on the webhook thread.
 */
export function ownBody(request: WebhookRequest): Buffer {
  const { body } = request;
  const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  return whole && request.bodyHandedOver === true ? body : Buffer.from(new Uint8Array(body).buffer);
}

/**
 * The memory of the bodies, each once: every body is all of its own `ArrayBuffer` (`ownBody`), so
 * it moves to the thread (transferred, not copied) and is empty here afterwards.
 */
function moved(requests: ThreadRequest[]): ArrayBuffer[] {
  return [...new Set(requests.map((r) => r.body.buffer as ArrayBuffer))];
}
