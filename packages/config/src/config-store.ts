import { EventEmitter } from 'node:events';
import { unwatchFile, watchFile } from 'node:fs';
import { loadConfigFile } from './load.ts';
import type { SluiceConfig } from './types.ts';

export interface ConfigStoreEvents {
  change: [config: SluiceConfig];
  invalid: [error: Error];
}

/**
 * Holds the current configuration and reloads it when the file changes (docs/configuration.md). An invalid
 * new file is reported through `invalid` and the previous config stays in force. Readers call
 * `current` at the start of each unit of work, so a reload applies to work that starts after it.
 */
export class ConfigStore extends EventEmitter<ConfigStoreEvents> {
  #current: SluiceConfig;
  #watching = false;
  readonly path: string | undefined;
  private readonly env: NodeJS.ProcessEnv;

  constructor(path: string | undefined, initial: SluiceConfig, env: NodeJS.ProcessEnv = process.env) {
    super();
    this.path = path;
    this.env = env;
    this.#current = initial;
  }

  /** Loads `path` once; throws `ConfigError` naming the field when it is invalid. */
  static fromFile(path: string, env: NodeJS.ProcessEnv = process.env): ConfigStore {
    return new ConfigStore(path, loadConfigFile(path, env), env);
  }

  get current(): SluiceConfig {
    return this.#current;
  }

  /** Replaces the config (used by reloads and by tests that change destinations live). */
  set(config: SluiceConfig): void {
    this.#current = config;
    this.emit('change', config);
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
