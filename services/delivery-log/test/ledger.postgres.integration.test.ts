import { after } from 'node:test';
import { startLocalPostgres } from '@sluice/local-postgres';

// The ledger's conformance suite again, against a real PostgreSQL server (@sluice/local-postgres).
const server = await startLocalPostgres();
process.env.DELIVERY_LOG_TEST_DATABASE_URL = server.url;
after(() => server.stop());
await import('./ledger.test.ts');
