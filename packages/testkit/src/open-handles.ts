import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { testBrokers } from './brokers.ts';

/** Sockets this thread holds open to the test broker (kafkajs keeps one per connected client). */
export function brokerSockets(): number {
  const ports = new Set(testBrokers().map((b) => Number(b.split(':').pop())));
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter(
    (h) =>
      typeof (h as Socket).remotePort === 'number' && ports.has((h as Socket).remotePort!) && !(h as Socket).destroyed,
  ).length;
}

const TASKS = '/proc/self/task';

/**
 * Worker threads of this process that are still running (Linux: the OS threads Node names
 * `WorkerThread`); a thread a service forgot to end shows here even when it holds no socket.
 */
export function workerThreads(): number {
  if (!existsSync(TASKS)) throw new Error(`${TASKS} is missing: counting worker threads needs Linux`);
  return readdirSync(TASKS).filter((task) => {
    try {
      return readFileSync(`${TASKS}/${task}/comm`, 'utf8').trim() === 'WorkerThread';
    } catch {
      return false; // the thread ended while we looked
    }
  }).length;
}
