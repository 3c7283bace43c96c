import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The store's conformance suite again, against a real PostgreSQL server (@sluice/local-postgres):
// one SQL dialect, one schema and the same rules on both databases.
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./store.test.ts');
await import('./store-hostile.test.ts');
await import('./store-deletions.test.ts');
await import('./store-batches.test.ts');
