import { z } from 'zod';
import { loadConfigOrExit, setting } from '@repo/config';
import { redactUrl } from '@repo/config';
import { migrateDatabase, type MigrationLogger } from './migrations.js';

/**
 * Body of an app's `db:migrate` command and Kubernetes migration Job: migrates DATABASE_URL,
 * creating the database when it does not exist.
 */
export async function migrateFromEnvironment(options: { migrationsDir: string; logger: MigrationLogger }): Promise<void> {
  const { DATABASE_URL } = loadConfigOrExit(z.object({ DATABASE_URL: setting.postgresUrl() }));
  const applied = await migrateDatabase(DATABASE_URL, options.migrationsDir, { createDatabase: true, logger: options.logger });
  options.logger.info(
    { database: redactUrl(DATABASE_URL), applied: applied.length },
    applied.length ? 'database migrated' : 'database already up to date',
  );
}
