/**
 * What every service's base error carries (docs/CONVENTIONS.md): a stable `code` that code and
 * operators branch on, and whether retrying may help. Each service derives its own base from it.
 */
export class CodedError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
  }
}
