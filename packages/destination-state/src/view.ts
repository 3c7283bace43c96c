import { parseStateKey, stateKey, type DestinationStateValue, type EffectiveState } from './state.ts';

/** One key of the state topic changed (`value` null: the key was deleted, i.e. back to active). */
export interface StateChange {
  key: string;
  destinationId: string;
  endpointRef?: string;
  value: DestinationStateValue | null;
}

const SEVERITY = { active: 0, paused: 1, disabled: 2 } as const;

/**
 * The latest state of every key of `sluice.destination-state`, as a reader has applied them.
 * Keys of destinations the config does not name are kept but never asked for: the config says
 * which destinations exist, the topic only what state they are in.
 */
export class DestinationStateView {
  readonly #values = new Map<string, DestinationStateValue>();
  readonly #listeners = new Set<(change: StateChange) => void>();

  /**
   * The state in force for a destination, or for one of its endpoints: an endpoint is paused or
   * disabled when it or its destination is; when both are, the more severe state wins (disabled
   * over paused), the destination's on a tie. A key never written, or deleted, is active.
   */
  get(destinationId: string, endpointRef?: string): EffectiveState {
    const own = this.#values.get(destinationId);
    const endpoint = endpointRef === undefined ? undefined : this.#values.get(stateKey(destinationId, endpointRef));
    let chosen = own?.state === 'active' ? undefined : own;
    if (endpoint && endpoint.state !== 'active' && SEVERITY[endpoint.state] > SEVERITY[chosen?.state ?? 'active'])
      chosen = endpoint;
    if (!chosen) {
      // Active: say since when, if an operator said so (a resume or an enable).
      const latest = endpoint ?? own;
      return latest ? effective(latest) : { state: 'active' };
    }
    return effective(chosen);
  }

  /** The value stored under one key, as written (undefined: never written or deleted). */
  value(key: string): DestinationStateValue | undefined {
    return this.#values.get(key);
  }

  /** Every key and its latest value. */
  entries(): IterableIterator<[string, DestinationStateValue]> {
    return this.#values.entries();
  }

  /** Called after every change applied; returns the function that unsubscribes. */
  onChange(listener: (change: StateChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Applies one record of the topic (null: a tombstone). */
  apply(key: string, value: DestinationStateValue | null): void {
    if (value === null) {
      if (!this.#values.delete(key)) return;
    } else this.#values.set(key, value);
    const change: StateChange = { key, ...parseStateKey(key), value };
    for (const listener of this.#listeners) listener(change);
  }
}

function effective(v: DestinationStateValue): EffectiveState {
  const state: EffectiveState = { state: v.state, reason: v.reason, by: v.by, since: v.at };
  if (v.auto) state.auto = true;
  return state;
}
