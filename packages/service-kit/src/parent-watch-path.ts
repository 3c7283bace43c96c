import { fileURLToPath } from 'node:url';

/** Path of the preload that stops a spawned service when its parent process disappears. */
export const PARENT_WATCH_PRELOAD = fileURLToPath(new URL('./parent-watch.ts', import.meta.url));
