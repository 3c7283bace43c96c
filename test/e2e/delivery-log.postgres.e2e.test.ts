import { after, before } from 'node:test';
import { startLocalPostgres, type LocalPostgres } from '@sluice/local-postgres';
import postgres from 'postgres';
import { deliveryLogScenarios } from './delivery-log-scenarios.ts';

// The same scenarios against a real PostgreSQL server the test starts (@sluice/local-postgres),
// one fresh database for the run.
let server: LocalPostgres;
before(async () => {
  server = await startLocalPostgres();
});
after(() => server?.stop());

deliveryLogScenarios('PostgreSQL', async () => {
  const name = `delivery_log_${Date.now().toString(36)}`;
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return { url: server.url.replace(/\/postgres$/, `/${name}`), close: async () => {} };
});
