import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The read tests again, against a real PostgreSQL server (@sluice/local-postgres).
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./read-store.test.ts');
