import { homedir } from 'node:os';
import { join } from 'node:path';

/** The per-user cache of provisioned tools: `$SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`, else `~/.cache/sluice`. */
export function sluiceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SLUICE_CACHE_DIR) return env.SLUICE_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'sluice');
  return join(homedir(), '.cache', 'sluice');
}
