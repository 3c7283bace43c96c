import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The batcher tests again, against a real PostgreSQL server (@sluice/local-postgres), where the
// lanes' transactions really run at the same time.
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./ingest-batcher.test.ts');
