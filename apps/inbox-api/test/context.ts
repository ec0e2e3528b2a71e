import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@repo/config';
import { connectDatabase } from '@repo/db';
import { createScratchDatabase } from '@repo/db/dev';
import { createLogger, createMetrics } from '@repo/http';
import { buildApp } from '../src/app.js';
import { configSchema } from '../src/config.js';
import { createDatabaseClient } from '../src/database.js';
import { createDeps } from '../src/deps.js';
import { migrationsDir } from '../src/paths.js';

/**
 * The content workers at the event loop's priority: the suites keep two cores busy with jest,
 * Postgres and each other, and a worker at nice 10 gets about a tenth of the share of each busy
 * thread it competes with, so a body that takes seconds of worker time could take minutes.
 * content-pool.test.ts checks the priority itself; the built app (startService) runs with the default.
 */
const TEST_SCHEDULING = { INBOX_CONTENT_NICE: '0' };

/**
 * The app on a fresh, migrated database and data folder of its own, with the adapters server.ts
 * builds (local mail delivery, local object storage). `env` sets configuration variables as the
 * environment would. Call in beforeAll; `close` drops the database and the folder.
 */
export async function createTestContext(env: Record<string, string> = {}) {
  const database = await createScratchDatabase({ label: 'inbox_api', migrationsDir });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-api-test-'));
  return contextOn(database.url, dataDir, env, async () => {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });
}

async function contextOn(url: string, dataDir: string, env: Record<string, string>, cleanUp: () => Promise<void>) {
  const config = loadConfig(configSchema, {
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    INBOX_EMAIL_DOMAIN: 'inbox.test',
    ...TEST_SCHEDULING,
    ...env,
  });
  const db = createDatabaseClient(url, 4);
  const logger = createLogger({ service: 'inbox-api', level: config.LOG_LEVEL });
  const { deps, close } = await createDeps(config, {
    db,
    logger,
    metrics: createMetrics({ service: 'inbox-api', collectDefault: false }),
    databaseUrl: url,
  });
  return {
    app: buildApp(deps),
    deps,
    db,
    dataDir,
    /**
     * Another instance of the app on the same database, data folder and Redis, as a second replica;
     * `overrides` change its configuration variables. Close it before this context.
     */
    replica: (overrides: Record<string, string> = {}) =>
      contextOn(url, dataDir, { ...env, ...overrides }, () => Promise.resolve()),
    async close() {
      await close();
      await db.$disconnect();
      await cleanUp();
    },
  };
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;

/**
 * The app as server.ts runs it without DATABASE_URL: on the embedded database (PGlite, migrated,
 * behind its socket server) in a data folder of its own. `env` as for createTestContext. Call in
 * beforeAll (it takes a while); `close` removes the folder.
 */
export async function createEmbeddedTestContext(env: Record<string, string> = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-api-embedded-'));
  const config = loadConfig(configSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...TEST_SCHEDULING, ...env });
  const logger = createLogger({ service: 'inbox-api', level: config.LOG_LEVEL });
  const connection = await connectDatabase({
    dataDir,
    migrationsDir,
    migrateOnStart: true,
    poolSize: 10,
    extensions: ['pg_trgm', 'btree_gin'],
    logger,
  });
  const db = createDatabaseClient(connection.url, connection.poolSize, { sharedSession: connection.sharedSession });
  const { deps, close } = await createDeps(config, {
    db,
    logger,
    metrics: createMetrics({ service: 'inbox-api', collectDefault: false }),
    databaseUrl: connection.url,
  });
  return {
    app: buildApp(deps),
    deps,
    db,
    async close() {
      await close();
      await db.$disconnect();
      await connection.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export type EmbeddedTestContext = Awaited<ReturnType<typeof createEmbeddedTestContext>>;

/** Reads until `done` holds or the time is up, and returns the last reading. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
