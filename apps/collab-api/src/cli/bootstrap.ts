import { connectDatabase } from '@repo/db';
import type { Logger } from '@repo/http';
import type { Config } from '../config.js';
import { createDatabaseClient } from '../database.js';
import { defaultDataDir, migrationsDir } from '../paths.js';
import { type BootstrapInput, bootstrapTenant } from '../tenants/bootstrap.js';

/**
 * `cli bootstrap`: creates a tenant and its first Org admin on the database the server uses
 * (DATABASE_URL, or the embedded one under DATA_DIR, migrated first; served by the running service
 * when there is one). Returns the line to print, as the contract shows it.
 */
export async function bootstrap(config: Config, logger: Logger, input: BootstrapInput): Promise<string> {
  const connection = await connectDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR ?? defaultDataDir,
    migrationsDir,
    migrateOnStart: config.MIGRATE_ON_START,
    poolSize: 1,
    logger,
  });
  const db = createDatabaseClient(connection.url, connection.poolSize, { sharedSession: connection.sharedSession });
  try {
    const { tenantId, userId } = await bootstrapTenant(db, input);
    return `{"tenant_id": ${JSON.stringify(tenantId)}, "user_id": ${JSON.stringify(userId)}}`;
  } finally {
    await db.$disconnect();
    await connection.close();
  }
}
