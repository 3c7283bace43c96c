export { startLocalPostgres } from './server.ts';
export type { LocalPostgres, StartLocalPostgresOptions } from './server.ts';
export { ensurePostgresInstalled, findPostgresInstallation, POSTGRES_VERSION } from './install.ts';
export type { PostgresInstallation } from './install.ts';
