export { startLocalPostgres, type LocalPostgres, type StartLocalPostgresOptions } from './server.ts';
export {
  ensurePostgresInstalled,
  findPostgresInstallation,
  POSTGRES_VERSION,
  type PostgresInstallation,
} from './install.ts';
