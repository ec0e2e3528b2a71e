// First: DuckDB's allocator reads its settings when its library loads (memory/allocator.ts).
import './memory/allocator.js';
import { loadConfigOrExit } from '@repo/config';
import { connectDatabase } from '@repo/db';
import { createLogger, createMetrics, serve } from '@repo/http';
import { collabErrorFormat } from '@repo/errors';
import { buildApp } from './app.js';
import { configSchema } from './config.js';
import { createDatabaseClient } from './database.js';
import { createDeps } from './deps.js';
import { applyMemoryBudget } from './memory/budget.js';
import { defaultDataDir, migrationsDir } from './paths.js';
import { startReconciler } from './reconciler.js';
import { buildWorkerApp, startWorker, type Worker } from './worker.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger({ service: 'collab-api', level: config.LOG_LEVEL });

const connection = await connectDatabase({
  url: config.DATABASE_URL,
  dataDir: config.DATA_DIR ?? defaultDataDir,
  migrationsDir,
  migrateOnStart: config.MIGRATE_ON_START,
  poolSize: config.DB_POOL_SIZE,
  logger,
});
const db = createDatabaseClient(connection.url, connection.poolSize, { sharedSession: connection.sharedSession });
const { deps, close } = await createDeps(config, {
  db,
  logger,
  metrics: createMetrics({ service: 'collab-api' }),
  databaseUrl: connection.url,
});
// Now that DuckDB, its threads and the pools are up: what the process may grow by from here.
await applyMemoryBudget({ budgetMb: config.COLLAB_MEMORY_BUDGET_MB, logger });

// What a crash interrupted is put right at start-up (in the background), then every interval.
const reconciler = startReconciler(
  { ...deps, leaseSeconds: config.COLLAB_WAREHOUSE_LEASE_SECONDS },
  {
    intervalSeconds: config.COLLAB_RECONCILE_INTERVAL_SECONDS,
    sweepIntervalSeconds: config.COLLAB_WAREHOUSE_SWEEP_INTERVAL_SECONDS,
  },
);
// Background jobs run here unless COLLAB_WORKER=off (started once the server listens: pg-boss may
// first install its schema); with `only`, nothing but probes and metrics is served.
let worker: Promise<Worker | undefined> = Promise.resolve(undefined);
await serve(config.COLLAB_WORKER === 'only' ? buildWorkerApp(deps) : buildApp(deps), {
  port: config.PORT,
  host: config.HOST,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  errorFormat: collabErrorFormat,
  onClose: [
    // Running jobs get the shutdown timeout to finish; those still running then are released to be retried.
    async () => (await worker)?.stop(config.SHUTDOWN_TIMEOUT_MS / 1000),
    () => reconciler.stop(),
    close,
    () => db.$disconnect(),
    () => connection.close(),
  ],
});
if (config.COLLAB_WORKER !== 'off') {
  worker = startWorker(deps).catch((error: unknown) => {
    logger.error({ err: error }, 'the background worker could not start: jobs wait until a worker runs');
    return undefined;
  });
}
