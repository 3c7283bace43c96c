import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { brokerSockets, testConfig, testServiceContext, testKafka } from '@sluice/testkit';
import { createAudienceSync } from '../src/index.ts';

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
