import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { testBrokers, testConfig, testServiceContext, testKafka } from '@sluice/testkit';
import { createAudienceSync } from '../src/index.ts';

/** Sockets this process holds open to the broker (kafkajs keeps one per connected client). */
function brokerSockets(): number {
  const ports = new Set(testBrokers().map((b) => Number(b.split(':').pop())));
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter(
    (h) =>
      typeof (h as Socket).remotePort === 'number' && ports.has((h as Socket).remotePort!) && !(h as Socket).destroyed,
  ).length;
}

test('a start that fails at its last step (port taken) closes everything it opened', async () => {
  const blocker: Server = createServer();
  await new Promise<void>((r) => blocker.listen(0, '0.0.0.0', r));
  const port = (blocker.address() as AddressInfo).port;
  const config = testConfig({ sources: [{ id: 'web', writeKeys: ['wk'] }] });
  const before = brokerSockets();
  try {
    // Admin, producer, state rebuild and the snapshot consumer are all up when the listen fails.
    await assert.rejects(
      createAudienceSync(testServiceContext('audience-sync', config), { port }).start(),
      /EADDRINUSE/,
    );
  } finally {
    await new Promise<void>((r) => blocker.close(() => r()));
  }
  // The snapshot consumer left its group (a leaked one would stay a member until its session expired).
  const admin = testKafka().admin();
  await admin.connect();
  const { groups } = await admin.describeGroups([`${config.kafka.clientId}-audience-sync`]);
  await admin.disconnect();
  assert.equal(groups[0]!.members.length, 0, `group state ${groups[0]!.state}`);
  assert.equal(brokerSockets(), before, 'no connection to the broker is left open');
});
