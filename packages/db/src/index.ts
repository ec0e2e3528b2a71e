export { connectDatabase, type ConnectOptions, type DatabaseConnection } from './connect.js';
export { startEmbeddedPostgres, type EmbeddedExtension, type EmbeddedPostgres } from './embedded.js';
export {
  applyMigrations,
  ensureDatabase,
  migrateDatabase,
  MigrationError,
  pendingMigrations,
  quoteIdentifier,
  readMigrations,
  redactUrl,
  withClient,
  type Migration,
  type MigrationLogger,
} from './migrations.js';
export { migrateFromEnvironment } from './migrate-command.js';
export { isUniqueViolation } from './errors.js';
