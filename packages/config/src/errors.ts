/** A configuration problem, naming the field (`destinations[0].settings.webhooks[2].url`). */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly file?: string,
  ) {
    super(`${file ? `${file}: ` : ''}${field}: ${problem}`);
    this.name = 'ConfigError';
  }
}
