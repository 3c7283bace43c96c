import { ConfigError, loadConfigFile } from '@sluice/config';
import { CliError, type CliIo } from '../io.ts';

/** `sluice config validate <file>`: exit 0 when valid; exit 1 with the error naming the field. */
export function configValidate(io: CliIo, file: string): void {
  try {
    const config = loadConfigFile(file, io.env);
    const endpoints = config.destinations.reduce((n, d) => n + d.endpoints.length, 0);
    io.stdout(
      `valid: ${file} (${config.sources.length} sources, ${config.destinations.length} destinations, ${endpoints} endpoints)\n`,
    );
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`invalid: ${err.message}`);
    throw err;
  }
}
