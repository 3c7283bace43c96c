import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The store tests again, against a real PostgreSQL server (@sluice/local-postgres): one SQL
// dialect and one schema for both databases.
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./store.test.ts');
