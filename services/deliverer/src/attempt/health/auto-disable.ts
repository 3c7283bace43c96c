/** Why an endpoint is disabled: since when no attempt got a 2xx, and the last error. */
export interface Disabling {
  destinationId: string;
  endpoint: string;
  failingSince: number;
  lastError: string;
}

/**
 * Auto-disable (docs/reference/destination-actions.md): per endpoint, the time of the first attempt
 * without a 2xx since its last 2xx. An attempt that finds that time `afterMs` or more behind it
 * disables the endpoint; the endpoint then starts a new count, so after it is enabled again it has
 * the whole time anew. Only attempts count: an endpoint with nothing to send is never disabled.
 */
export class AutoDisableTracker {
  readonly #failing = new Map<string, { since: number; lastError: string }>();

  /** Records one attempt's result (`at`: when it started); returns the disabling it leads to, if any. */
  observe(
    destinationId: string,
    endpoint: string,
    success: boolean,
    at: number,
    error: string,
    afterMs: number,
  ): Disabling | undefined {
    const key = `${destinationId}\u0000${endpoint}`;
    if (success) {
      this.#failing.delete(key);
      return undefined;
    }
    let entry = this.#failing.get(key);
    if (entry === undefined) {
      entry = { since: at, lastError: error };
      this.#failing.set(key, entry);
    }
    entry.lastError = error;
    if (afterMs <= 0 || at - entry.since < afterMs) return undefined;
    this.#failing.delete(key);
    return { destinationId, endpoint, failingSince: entry.since, lastError: entry.lastError };
  }

  /** Forgets endpoints no longer configured. */
  retain(keep: (destinationId: string, endpoint: string) => boolean): void {
    for (const key of this.#failing.keys()) {
      const [destinationId, endpoint] = key.split('\u0000') as [string, string];
      if (!keep(destinationId, endpoint)) this.#failing.delete(key);
    }
  }
}
