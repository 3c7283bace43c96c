import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The retention tests again, against a real PostgreSQL server (@sluice/local-postgres): batched
// pruning on indexed columns and eviction over the size cap hold on both databases.
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./retention.test.ts');
