import { loadConfigOrExit } from '@repo/config';
import { connectDatabase } from '@repo/db';
import { createLogger, createMetrics, serve } from '@repo/http';
import { inboxErrorFormat } from '@repo/errors';
import { buildApp } from './app.js';
import { configSchema } from './config.js';
import { createDatabaseClient } from './database.js';
import { createDeps } from './deps.js';
import { defaultDataDir, migrationsDir } from './paths.js';
import { startReconciler } from './reconciler.js';
import { startWebhookDispatcher } from './webhooks-out/dispatch.js';

const config = loadConfigOrExit(configSchema);
const logger = createLogger({ service: 'inbox-api', level: config.LOG_LEVEL });
if (!config.INBOX_API_KEYS) {
  logger.warn(
    'INBOX_API_KEYS is not set: the API is open, anyone who can reach it acts as an operator (organization API keys presented are still checked)',
  );
}

const connection = await connectDatabase({
  url: config.DATABASE_URL,
  dataDir: config.DATA_DIR ?? defaultDataDir,
  migrationsDir,
  migrateOnStart: config.MIGRATE_ON_START,
  poolSize: config.DB_POOL_SIZE,
  extensions: ['pg_trgm', 'btree_gin'],
  logger,
});
const db = createDatabaseClient(connection.url, connection.poolSize, { sharedSession: connection.sharedSession });
const { deps, close } = await createDeps(config, {
  db,
  logger,
  metrics: createMetrics({ service: 'inbox-api' }),
  databaseUrl: connection.url,
});

// What a crash interrupted is put right at start-up (in the background), then every interval.
const reconciler = startReconciler(
  { ...deps, leaseSeconds: config.INBOX_SEND_LEASE_SECONDS },
  { intervalSeconds: config.INBOX_RECONCILE_INTERVAL_SECONDS },
);
await serve(buildApp(deps), {
  port: config.PORT,
  host: config.HOST,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  errorFormat: inboxErrorFormat,
  onClose: [
    // A summary being written (or a delivery under way) gets the shutdown timeout to finish; one still running then is retried later.
    async () => dispatcher?.stop(),
    () => deps.jobs.stop(config.SHUTDOWN_TIMEOUT_MS / 1000),
    () => reconciler.stop(),
    close,
    () => db.$disconnect(),
    () => connection.close(),
  ],
});
// Background jobs (scheduled and approved drafts, thread summaries, webhook deliveries) run in the API process. Started once the
// server listens: pg-boss may first install its schema. The fan-out of events to webhooks starts
// with it (it queues delivery jobs).
let dispatcher: ReturnType<typeof startWebhookDispatcher> | undefined;
deps.jobs.work(deps).then(
  () => {
    logger.info(
      { summaries: deps.languageModel?.provider ?? 'off' },
      'background jobs: worker started (drafts, webhook deliveries, summaries)',
    );
    dispatcher = startWebhookDispatcher(deps, { sweepSeconds: config.INBOX_WEBHOOK_SWEEP_SECONDS });
  },
  (error: unknown) =>
    logger.error({ err: error }, 'background jobs: the worker could not start; drafts, deliveries and summaries wait'),
);
