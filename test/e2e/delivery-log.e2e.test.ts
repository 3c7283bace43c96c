import { deliveryLogScenarios } from './delivery-log-scenarios.ts';

// The embedded database (PGlite), in memory: what `npm start` and the tests use by default.
deliveryLogScenarios('embedded database', async () => ({ close: async () => {} }));
