import type { SluiceConfig } from '@sluice/config';

/**
 * The config file in force, as far as the catalog needs it: where it is (outcomes and reports name
 * it), its sources and its destinations (whose ids the catalog never takes; a runtime destination
 * may name the file's sources and the runtime ones).
 */
export interface FileConfig {
  path: string;
  config: Pick<SluiceConfig, 'sources' | 'destinations'>;
}
