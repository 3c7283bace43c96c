import { CodedError } from '@sluice/errors';

/** A configuration problem, naming the field (`destinations[0].settings.webhooks[2].url`). */
export class ConfigError extends CodedError {
  readonly field: string;
  readonly problem: string;
  readonly file?: string;
  constructor(field: string, problem: string, file?: string) {
    // Not retryable: a config does not get valid by reading it again; fix the file.
    super('config_invalid', `${file ? `${file}: ` : ''}${field}: ${problem}`, false);
    this.field = field;
    this.problem = problem;
    this.file = file;
  }
}
