/**
 * Database tooling for an app, run from the app's folder (`pnpm db:migration`, `pnpm db:drift`):
 *   repo-db migration <name> [--from <git-revision>]   write a migration for schema.prisma's changes
 *   repo-db drift                                      check that the migrations produce schema.prisma
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkDrift, describeDrift } from './drift.js';
import { createMigration } from './new-migration.js';

const schemaPath = path.resolve('prisma/schema.prisma');
const migrationsDir = path.resolve('prisma/migrations');

const { positionals, values } = parseArgs({ allowPositionals: true, options: { from: { type: 'string' } } });
const [command, name] = positionals;

if (command === 'migration' && name) {
  const folder = await createMigration({ name, schemaPath, migrationsDir, fromRevision: values.from });
  if (!folder) {
    console.log('schema.prisma has no changes that need a migration.');
  } else {
    console.log(`Wrote ${path.relative(process.cwd(), folder)}/migration.sql; review it, then commit it with schema.prisma.`);
    const report = await checkDrift({ schemaPath, migrationsDir });
    console.log(describeDrift(report));
    process.exitCode = report.inSync ? 0 : 1;
  }
} else if (command === 'drift') {
  const report = await checkDrift({ schemaPath, migrationsDir });
  console.log(describeDrift(report));
  process.exitCode = report.inSync ? 0 : 1;
} else {
  console.error('usage: repo-db migration <name> [--from <git-revision>] | repo-db drift');
  process.exitCode = 2;
}
