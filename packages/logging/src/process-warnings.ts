import type { Logger } from './logger.ts';

/**
 * Node's process warnings go to the service's JSON log (level warn) instead of plain text on
 * stderr. One is dropped: kafkajs 2.2.4 arms a timer with a negative delay while it connects
 * (kafkajs issue 1751); Node runs such a timer after 1 ms, which is what kafkajs means, and warns
 * about it (`TimeoutNegativeWarning`). The same warning from anywhere else is logged.
 */
export function logProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'TimeoutNegativeWarning' && /[\\/]kafkajs[\\/]/.test(warning.stack ?? '')) return;
    logger.warn({ warning: { name: warning.name, message: warning.message } }, 'Node process warning');
  });
}
