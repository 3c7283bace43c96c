import { EventEmitter } from 'node:events';
import { unwatchFile, watchFile } from 'node:fs';
import { loadConfigFile } from './load.ts';
import type { SluiceConfig } from './types.ts';

/**
 * A service's part of a reload: builds from the new config everything it will need (and throws
 * when it cannot), then returns the function that puts it in force. Nothing is put in force, and
 * the running config stays, unless every step built its part.
 */
export type ReloadStep = (next: SluiceConfig) => () => void;

/**
 * What a service lays over the file's config: the config in force, given the file's (the file's
 * destinations merged with the runtime ones). Throws, changing nothing, when it cannot build it.
 */
export type ConfigLayer = (file: SluiceConfig) => SluiceConfig;

export interface ConfigStoreEvents {
  change: [config: SluiceConfig];
  invalid: [error: Error];
}

/**
 * Holds the current configuration and reloads it when the file changes (docs/configuration.md).
 * A new config is validated, then every reload step builds what it needs from it; only when all
 * of that succeeded is it swapped in and each step's part put in force. An invalid file or a
 * step that cannot build is reported through `invalid`, and the previous config, and everything
 * built from it, stays in force. Readers call `current` at the start of each unit of work, so a
 * reload applies to work that starts after it. `change` listeners are told afterwards and must
 * not fail: whatever can fail belongs in a reload step.
 */
export class ConfigStore extends EventEmitter<ConfigStoreEvents> {
  #current: SluiceConfig;
  #file: SluiceConfig;
  #layer: ConfigLayer | undefined;
  #watching = false;
  readonly path: string | undefined;
  /** Where the file's `{ env }` references are read (and the keyring's keys). */
  readonly env: NodeJS.ProcessEnv;
  readonly #steps = new Set<ReloadStep>();

  constructor(path: string | undefined, initial: SluiceConfig, env: NodeJS.ProcessEnv = process.env) {
    super();
    this.path = path;
    this.env = env;
    this.#current = initial;
    this.#file = initial;
  }

  /** Loads `path` once; throws `ConfigError` naming the field when it is invalid. */
  static fromFile(path: string, env: NodeJS.ProcessEnv = process.env): ConfigStore {
    return new ConfigStore(path, loadConfigFile(path, env), env);
  }

  /** The config in force: the file's, with the layer over it when there is one. */
  get current(): SluiceConfig {
    return this.#current;
  }

  /** The config as the file (or `set`) gave it, before any layer. */
  get file(): SluiceConfig {
    return this.#file;
  }

  /** Adds a reload step (see `ReloadStep`); returns the function that removes it. */
  onReload(step: ReloadStep): () => void {
    this.#steps.add(step);
    return () => void this.#steps.delete(step);
  }

  /**
   * Replaces the file's config (used by reloads and by tests that change destinations live); the
   * config in force is the layer's over it. Throws, changing nothing, when the layer or a reload
   * step cannot build its part.
   */
  set(config: SluiceConfig): void {
    const next = this.#layer === undefined ? config : this.#layer(config);
    const commits = [...this.#steps].map((step) => step(next));
    this.#file = config;
    this.#current = next;
    for (const commit of commits) commit();
    this.emit('change', next);
  }

  /**
   * Lays `layer` over the file's config from now on, and puts the result in force as a reload
   * does. Throws, changing nothing, when it cannot.
   */
  lay(layer: ConfigLayer): void {
    const before = this.#layer;
    this.#layer = layer;
    try {
      this.set(this.#file);
    } catch (err) {
      this.#layer = before;
      throw err;
    }
  }

  /**
   * Builds the config in force again from the file's (what the layer reads changed), by the path
   * a reload takes: a config that cannot be put in force is reported through `invalid`, and the
   * previous one stays.
   */
  refresh(): void {
    try {
      this.set(this.#file);
    } catch (err) {
      this.emit('invalid', err as Error);
    }
  }

  reload(): void {
    if (!this.path) return;
    try {
      this.set(loadConfigFile(this.path, this.env));
    } catch (err) {
      this.emit('invalid', err as Error);
    }
  }

  /**
   * Polls the file (polling survives the symlink swaps Kubernetes uses for ConfigMaps).
   * @param intervalMs default 1000
   */
  watch(intervalMs = 1000): void {
    if (!this.path || this.#watching) return;
    this.#watching = true;
    watchFile(this.path, { interval: intervalMs, persistent: false }, (curr, prev) => {
      if (curr.mtimeMs !== prev.mtimeMs || curr.size !== prev.size) this.reload();
    });
  }

  close(): void {
    if (this.path && this.#watching) unwatchFile(this.path);
    this.#watching = false;
  }
}
