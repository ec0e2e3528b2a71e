import { loadConfig } from '@repo/config';
import { createScratchDatabase } from '@repo/db/dev';
import { createLogger, createMetrics } from '@repo/http';
import { buildApp, type Deps } from '../src/app.js';
import { configSchema } from '../src/config.js';
import { createDatabaseClient } from '../src/database.js';
import { migrationsDir } from '../src/paths.js';

/**
 * The app on a fresh, migrated database of its own. Call in beforeAll; `close` drops the database.
 * `env` sets configuration variables as the environment would.
 */
export async function createTestContext(env: Record<string, string> = {}) {
  const database = await createScratchDatabase({ label: 'collab_api', migrationsDir });
  const config = loadConfig(configSchema, { DATABASE_URL: database.url, LOG_LEVEL: 'silent', ...env });
  const db = createDatabaseClient(database.url, 4);
  const deps: Deps = {
    config,
    db,
    logger: createLogger({ service: 'collab-api', level: config.LOG_LEVEL }),
    metrics: createMetrics({ service: 'collab-api', collectDefault: false }),
  };
  return {
    app: buildApp(deps),
    deps,
    db,
    async close() {
      await db.$disconnect();
      await database.drop();
    },
  };
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;
