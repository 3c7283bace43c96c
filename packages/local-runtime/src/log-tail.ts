import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** The last `lines` lines of a log file (read from its last `maxBytes`), trimmed; '' if it is missing or empty. */
export function tailLog(file: string, lines = 40, maxBytes = 256 * 1024): string {
  try {
    const size = statSync(file).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    return buffer
      .toString('utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trim();
  } catch {
    return '';
  }
}
