/** A configuration problem, naming the field (`destinations[0].settings.webhooks[2].url`). */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  /** A config does not get valid by reading it again: fix the file. */
  readonly retryable = false;
  readonly field: string;
  readonly problem: string;
  readonly file?: string;
  constructor(field: string, problem: string, file?: string) {
    super(`${file ? `${file}: ` : ''}${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
    this.file = file;
    this.name = 'ConfigError';
  }
}
