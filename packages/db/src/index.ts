export { connectDatabase, type ConnectOptions, type DatabaseConnection } from './connect.js';
export {
  openEmbeddedPostgres,
  startEmbeddedPostgres,
  type EmbeddedExtension,
  type EmbeddedPostgres,
  type OpenedEmbeddedPostgres,
} from './embedded.js';
export {
  applyMigrations,
  ensureDatabase,
  migrateDatabase,
  MigrationError,
  pendingMigrations,
  quoteIdentifier,
  readMigrations,
  withClient,
  type Migration,
  type MigrationLogger,
} from './migrations.js';
export { migrateFromEnvironment } from './migrate-command.js';
export { isForeignKeyViolation, isUniqueViolation, violatedUniqueIndex } from './errors.js';
export { uuidv7 } from './ids.js';
export { preparedQuery, type PreparingClient, type SqlStatement } from './prepared.js';
export { createPool, type PoolOptions } from './pool.js';
export { pgTransaction } from './transaction.js';
