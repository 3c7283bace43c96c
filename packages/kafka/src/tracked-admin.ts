import type { Admin, Kafka } from 'kafkajs';

/**
 * An admin client (not yet connected) and whether it is connected now, as the CONNECT and
 * DISCONNECT events tell it: what a service's `/readyz` reads.
 */
export function trackedAdmin(kafka: Kafka): { admin: Admin; connected: () => boolean } {
  const admin = kafka.admin();
  let connected = false;
  admin.on(admin.events.CONNECT, () => (connected = true));
  admin.on(admin.events.DISCONNECT, () => (connected = false));
  return { admin, connected: () => connected };
}
