export { createLogger, type Logger, type LoggerSettings } from './logger.ts';
export { REDACT_PATHS } from './redaction.ts';
export { logProcessWarnings } from './process-warnings.ts';
export { redactUrl, redactUrlsIn } from './redact-url.ts';
export { escapeControls } from './escape-controls.ts';
