import { mkdtemp, rm } from 'node:fs/promises';
import type { RequestListener } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@repo/config';
import request from 'supertest';
import { createScratchDatabase } from '@repo/db/dev';
import { createLogger, createMetrics } from '@repo/http';
import { buildApp } from '../src/app.js';
import { type LocalTokenOptions, mintLocalToken } from '../src/auth/index.js';
import { configSchema } from '../src/config.js';
import { createDatabaseClient } from '../src/database.js';
import { createDeps } from '../src/deps.js';
import { migrationsDir } from '../src/paths.js';
import { startWorker, type Worker } from '../src/worker.js';

/** COLLAB_JWT_SECRET of test apps (unless a test configures COLLAB_JWKS_URL). */
export const TEST_SECRET = 'collab-api-test-secret-0123456789abcdef';

/**
 * The app on a fresh, migrated database and data folder of its own, with the adapters server.ts
 * builds (DuckDB warehouse under the data folder, HS256 tokens). `env` sets configuration
 * variables as the environment would. Call in beforeAll; `close` drops the database and folder.
 */
export async function createTestContext(env: Record<string, string> = {}) {
  const database = await createScratchDatabase({ label: 'collab_api', migrationsDir });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-api-test-'));
  const secret = env.COLLAB_JWKS_URL ? {} : { COLLAB_JWT_SECRET: TEST_SECRET };
  const config = loadConfig(configSchema, {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    COLLAB_WORKER_POLL_SECONDS: '1',
    ...secret,
    ...env,
  });
  // Four connections (the service defaults to 10) unless the test sets DB_POOL_SIZE.
  const db = createDatabaseClient(database.url, env.DB_POOL_SIZE ? config.DB_POOL_SIZE : 4);
  const logger = createLogger({ service: 'collab-api', level: config.LOG_LEVEL });
  const { deps, close } = await createDeps(config, {
    db,
    logger,
    metrics: createMetrics({ service: 'collab-api', collectDefault: false }),
  });
  let worker: Worker | undefined;
  return {
    app: buildApp(deps),
    deps,
    db,
    databaseUrl: database.url,
    dataDir,
    /** A token as `cli token` mints it, with the test secret and the configured issuer and audience. */
    token(sub: string, options: Omit<LocalTokenOptions, 'secret' | 'sub'> = {}): string {
      return mintLocalToken({
        secret: TEST_SECRET,
        sub,
        issuer: config.COLLAB_JWT_ISSUER,
        audience: config.COLLAB_JWT_AUDIENCE,
        ...options,
      });
    },
    /** Runs background jobs (load jobs) in this process from now on, as server.ts does by default. */
    async startWorker(): Promise<void> {
      worker ??= await startWorker(deps);
    },
    async close() {
      await worker?.stop(5);
      await close();
      await db.$disconnect();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

/** Requests to `app` with `token` as the bearer token. */
export function as(app: RequestListener, token: string) {
  return {
    get: (path: string) => request(app).get(path).set(bearer(token)),
    post: (path: string, body: object = {}) => request(app).post(path).set(bearer(token)).send(body),
    put: (path: string, body: object = {}) => request(app).put(path).set(bearer(token)).send(body),
    patch: (path: string, body: object = {}) => request(app).patch(path).set(bearer(token)).send(body),
    delete: (path: string) => request(app).delete(path).set(bearer(token)),
  };
}
