import type { Readable } from 'node:stream';

export interface KeptBody {
  /** The first bytes of the body, up to what was asked; undefined when it was empty. */
  body: Buffer | undefined;
  /** Bytes read (the reading stops once `cap` is reached). */
  total: number;
}

/**
 * Reads a response body until it ends or `cap` bytes were read (then cancels it), keeping its first
 * `keep` bytes. Never rejects: a body cut short (an error, the deadline) gives what was read.
 */
export function readBody(body: Readable, keep: number, cap: number): Promise<KeptBody> {
  if (body.destroyed || body.readableEnded) return Promise.resolve({ body: undefined, total: 0 });
  return new BodyReader(body, keep, cap).read();
}

/**
 * The body reader behind `readBody`: plain stream events, no async iterator, and no closures
 * made per response.
 */
class BodyReader {
  #kept: Buffer | Buffer[] | undefined;
  #keptBytes = 0;
  #total = 0;
  #settled = false;
  #resolve: ((kept: KeptBody) => void) | undefined;

  private readonly body: Readable;
  private readonly keep: number;
  private readonly cap: number;
  constructor(body: Readable, keep: number, cap: number) {
    this.body = body;
    this.keep = keep;
    this.cap = cap;
  }

  read(): Promise<KeptBody> {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.body
        .on('data', (chunk: Buffer) => this.#data(chunk))
        .on('end', () => this.#finish())
        // The answer is already classified by its status; a body cut short changes nothing.
        .on('error', () => this.#finish())
        .on('close', () => this.#finish());
    });
  }

  #data(chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#keptBytes < this.keep) {
      const room = this.keep - this.#keptBytes;
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      const kept = this.#kept;
      if (kept === undefined) this.#kept = part;
      else if (Array.isArray(kept)) kept.push(part);
      else this.#kept = [kept, part];
      this.#keptBytes += part.length;
    }
    this.#total += chunk.length;
    if (this.#total >= this.cap) this.#finish();
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    const { body } = this;
    if (!body.destroyed && !body.readableEnded) body.destroy();
    const kept = this.#kept;
    this.#resolve?.({ body: Array.isArray(kept) ? Buffer.concat(kept) : kept, total: this.#total });
  }
}
