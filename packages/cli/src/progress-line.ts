import type { CliIo } from './io.ts';

/** A progress line is redrawn at most this often. */
const REDRAW_MS = 200;

/**
 * One line of progress on stderr, redrawn in place (`\r`, erase to end of line), drawn only when
 * stderr is a terminal so that pipes and logs never see it.
 */
export class ProgressLine {
  readonly #io: CliIo;
  readonly #now: () => number;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #drawn = false;

  constructor(io: CliIo, now: () => number = Date.now) {
    this.#io = io;
    this.#now = now;
  }

  /** Draws `text` unless the line was drawn less than `REDRAW_MS` ago; `text` is built only when drawn. */
  update(text: () => string): void {
    if (!this.#io.stderrIsTerminal) return;
    const now = this.#now();
    if (now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    this.#io.stderr(`\r${text()}\x1b[K`);
    this.#drawn = true;
  }

  /**
   * Erases the line (before other output, and at the end). The redraw interval still holds, so
   * output streaming past costs one redraw per interval, not one per line.
   */
  clear(): void {
    if (!this.#drawn) return;
    this.#io.stderr('\r\x1b[K');
    this.#drawn = false;
  }
}

/** `reading dead letters: 4,500 of 10,000 records (45%)`. */
export function progressText(what: string, read: number, total: number, extra = ''): string {
  const percent = total > 0 ? Math.floor((read / total) * 100) : 100;
  const count = (n: number) => n.toLocaleString('en-US');
  return `reading ${what}: ${count(read)} of ${count(total)} records (${percent}%)${extra}`;
}
