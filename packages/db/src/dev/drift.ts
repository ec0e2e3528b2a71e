import { withClient } from '../migrations.js';
import { diffDatamodels } from './prisma-diff.js';
import { schemaSnapshot } from './schema-snapshot.js';
import { createScratchDatabase } from './test-database.js';

export interface DriftReport {
  inSync: boolean;
  /** Lines of the schema snapshot that only the migrated database has. */
  onlyInMigrations: string[];
  /** Lines that only a database created straight from schema.prisma has. */
  onlyInSchema: string[];
}

/**
 * Compares a database built by applying the migrations with one built straight from
 * schema.prisma. Any difference means schema.prisma and the migrations disagree.
 */
export async function checkDrift(options: { schemaPath: string; migrationsDir: string }): Promise<DriftReport> {
  const fromSchemaSql = await diffDatamodels({ to: options.schemaPath });
  const migrated = await createScratchDatabase({ label: 'drift_migrations', migrationsDir: options.migrationsDir });
  const direct = await createScratchDatabase({ label: 'drift_schema' });
  try {
    await withClient(direct.url, (client) => client.query(fromSchemaSql));
    const [fromMigrations, fromSchema] = await Promise.all([
      withClient(migrated.url, schemaSnapshot),
      withClient(direct.url, schemaSnapshot),
    ]);
    const onlyInMigrations = fromMigrations.filter((line) => !fromSchema.includes(line));
    const onlyInSchema = fromSchema.filter((line) => !fromMigrations.includes(line));
    return { inSync: onlyInMigrations.length === 0 && onlyInSchema.length === 0, onlyInMigrations, onlyInSchema };
  } finally {
    await Promise.all([migrated.drop(), direct.drop()]);
  }
}

export function describeDrift(report: DriftReport): string {
  if (report.inSync) return 'schema.prisma and the migrations agree.';
  return [
    'schema.prisma and the migrations disagree. Create a migration with `pnpm db:migration <name>`.',
    ...report.onlyInSchema.map((line) => `  only in schema.prisma: ${line}`),
    ...report.onlyInMigrations.map((line) => `  only in migrations:    ${line}`),
  ].join('\n');
}
