export { createIngest, type IngestOptions, type IngestService } from './service.ts';
export { INGEST_DEFAULTS } from './constants.ts';
export { normaliseCall } from './domain/normalise-call.ts';
export { splitBody } from './domain/request-body.ts';
