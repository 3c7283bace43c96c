import { ConfigError, literalSecretFields, loadConfigFile, readConfigFile, transportWarnings } from '@sluice/config';
import { CliError, type CliIo } from '../io.ts';

/**
 * `sluice config validate <file>`: exit 0 when valid; exit 1 with the error naming the field. A
 * valid file gets a `warning:` line on stderr per secret written in clear (rather than
 * `{ env }` / `{ file }`) and per transport opt-in (`kafka.sasl.allowPlaintext`).
 */
export function configValidate(io: CliIo, file: string): void {
  try {
    const config = loadConfigFile(file, io.env);
    const endpoints = config.destinations.reduce((n, d) => n + d.endpoints.length, 0);
    io.stdout(
      `valid: ${file} (${config.sources.length} sources, ${config.destinations.length} destinations, ${endpoints} endpoints)\n`,
    );
    for (const field of literalSecretFields(readConfigFile(file)))
      io.stderr(`warning: ${field}: a secret written in the file; prefer { env: NAME } or { file: PATH }\n`);
    for (const warning of transportWarnings(config)) io.stderr(`warning: ${warning}\n`);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`invalid: ${err.message}`);
    throw err;
  }
}
