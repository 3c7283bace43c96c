/**
 * What every base error of a package or service carries (docs/CONVENTIONS.md): a stable `code`
 * that code and operators branch on, and whether retrying may help. Each package or service derives
 * its own base from it; the `name` is the class's own.
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
