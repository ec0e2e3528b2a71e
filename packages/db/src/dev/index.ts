export { checkDrift, describeDrift, type DriftReport } from './drift.js';
export { createMigration } from './new-migration.js';
export { diffDatamodels, isEmptyDiff } from './prisma-diff.js';
export { schemaSnapshot } from './schema-snapshot.js';
export {
  adminDatabaseUrl,
  createScratchDatabase,
  dropStaleDatabases,
  reserveScratchDatabase,
  type ScratchDatabase,
} from './test-database.js';
