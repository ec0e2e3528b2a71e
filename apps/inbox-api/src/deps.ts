import path from 'node:path';
import { type CrashPoint, crashPoints, generatedSecret } from '@repo/config';
import type { Logger, Metrics } from '@repo/http';
import { connectRedis, createRateLimit, createWindowedRateLimit, type RateLimit, type WindowedRateLimit } from '@repo/rate-limit';
import { createObjectStorage, type ObjectStorage } from '@repo/storage';
import { createLanguageModel, type LanguageModel } from './adapters/llm/index.js';
import { createMailTransport, type MailTransport } from './adapters/mail/index.js';
import { type KeyDirectory, keyDirectory } from './api-keys/directory.js';
import type { Config } from './config.js';
import { type Database, sqlClientOf } from './database.js';
import { createEventFeed, type EventFeed } from './events/feed.js';
import { createEventListener, type EventListener } from './events/listener.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { type ContentPool, createContentPool } from './messages/content/index.js';
import { deliverLocally, type LocalDeliveryDeps, resumeLocalDelivery } from './messages/local-delivery.js';
import { defaultDataDir } from './paths.js';
import { type SummaryRequests, summaryRequests } from './summaries/service.js';
import { createWebhookClient, type WebhookClient } from './webhooks-out/deliver.js';

/** Bodies smaller than this are rendered and cleaned inline: a few milliseconds at most (see bench/content.ts). */
const CONTENT_INLINE_BELOW_BYTES = 4 * 1024;
/** An idle worker looks for jobs this often; summaries wait INBOX_SUMMARY_DEBOUNCE_SECONDS anyway. */
const JOB_POLL_SECONDS = 2;
/** A running job reports it is alive this often; one quiet for this long (its process died) is retried. */
const JOB_HEARTBEAT_SECONDS = 30;

/** Everything the app talks to, built by createDeps (for server.ts and tests) and passed to buildApp. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  storage: ObjectStorage;
  mailer: MailTransport;
  /** Renders and cleans message bodies off the event loop. */
  content: ContentPool;
  /** Where crash tests stop the process (TEST_CRASH_POINT); does nothing otherwise. */
  crashPoint: CrashPoint;
  /** Signs the download links of attachments the app serves itself (local and database storage). */
  downloadSecret: string;
  /** Background jobs (pg-boss in the app's database); server.ts runs them. */
  jobs: JobQueue;
  /** Writes thread summaries; unset while LLM_PROVIDER is. */
  languageModel: LanguageModel | undefined;
  /** Queues a thread's summary with the message that changes it. */
  summaries: SummaryRequests;
  /** The process's one LISTEN for new events, shared by every long-poll and stream. */
  events: EventListener;
  /** The live tail of the event log that the process's SSE streams share: one read per announced commit for all of them. */
  feed: EventFeed;
  /** The organizations' API keys, looked up by secret (cached briefly in this process). */
  apiKeys: KeyDirectory;
  /** Delivers to webhooks: kept-alive connections, only to addresses INBOX_WEBHOOK_ALLOW_PRIVATE allows. */
  webhookClient: WebhookClient;
  limits: {
    /** Requests per minute per API key (per client address when the API is open); each key may have its own limit. */
    requests: WindowedRateLimit<'minute'>;
    /** Sends per inbox per hour and per day (INBOX_SEND_LIMIT_PER_HOUR, INBOX_SEND_LIMIT_PER_DAY). */
    sends: WindowedRateLimit<'hour' | 'day'>;
    /** Sends per organization API key per hour; each key may have its own limit. */
    keySends: WindowedRateLimit<'hour'>;
    /** Requests with a wrong API key per client address per minute. */
    authFailures: RateLimit;
  };
}

/**
 * Builds the app's adapters from its configuration: object storage, the mail transport, the
 * content workers, the rate limits (in Redis when REDIS_URL is set) and the key of download
 * links. `close` releases what they hold.
 */
export async function createDeps(
  config: Config,
  base: {
    db: Database;
    logger: Logger;
    metrics: Metrics;
    /** The embedded database's when DATABASE_URL is unset (pg-boss connects on its own). */ databaseUrl: string;
  },
): Promise<{ deps: Deps; close: () => Promise<void> }> {
  const { db, logger, metrics } = base;
  const dataDir = config.DATA_DIR ?? defaultDataDir;
  const downloadSecret = config.INBOX_DOWNLOAD_URL_SECRET ?? (await generatedDownloadSecret(dataDir, base.logger));
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL) : undefined;
  const storage = createObjectStorage(config, { localRoot: path.join(dataDir, 'objects'), database: sqlClientOf(base.db) });
  const content = createContentPool({
    threads: config.INBOX_CONTENT_THREADS,
    timeoutMs: config.INBOX_CONTENT_TIMEOUT_MS,
    inlineBelowBytes: CONTENT_INLINE_BELOW_BYTES,
    nice: config.INBOX_CONTENT_NICE,
  });
  const crashPoint = crashPoints(config.TEST_CRASH_POINT);
  const languageModel = createLanguageModel(config);
  const jobs = createJobQueue({
    databaseUrl: base.databaseUrl,
    embedded: !config.DATABASE_URL,
    logger: base.logger,
    pollSeconds: JOB_POLL_SECONDS,
    heartbeatSeconds: JOB_HEARTBEAT_SECONDS,
    supervise: true,
  });
  const summaries = summaryRequests({
    jobs,
    enabled: languageModel !== undefined,
    debounceSeconds: config.INBOX_SUMMARY_DEBOUNCE_SECONDS,
  });
  const delivery: LocalDeliveryDeps = {
    db: base.db,
    crashPoint,
    storage,
    content,
    emailDomain: config.INBOX_EMAIL_DOMAIN,
    leaseSeconds: config.INBOX_SEND_LEASE_SECONDS,
    inlineMaxBytes: config.INBOX_INLINE_ATTACHMENT_BYTES,
    summaries,
  };
  const events = createEventListener({ connectionString: base.databaseUrl, logger });
  const feed = createEventFeed({ db, events, logger });
  const webhookClient = createWebhookClient({
    allowPrivate: config.INBOX_WEBHOOK_ALLOW_PRIVATE,
    timeoutSeconds: config.INBOX_WEBHOOK_TIMEOUT_SECONDS,
  });
  const mailer = createMailTransport(config, {
    localDelivery: { deliver: (mail) => deliverLocally(delivery, mail), resume: (mail) => resumeLocalDelivery(delivery, mail) },
  });
  const limits = {
    requests: createWindowedRateLimit({ keyPrefix: 'inbox:requests', windows: { minute: 60 }, describe: 'requests', redis }),
    sends: createWindowedRateLimit({
      keyPrefix: 'inbox:sends',
      windows: { hour: 3600, day: 86_400 },
      describe: 'sends from this inbox',
      redis,
    }),
    keySends: createWindowedRateLimit({
      keyPrefix: 'inbox:key-sends',
      windows: { hour: 3600 },
      describe: 'sends with this API key',
      redis,
    }),
    authFailures: createRateLimit({
      keyPrefix: 'inbox:auth-failures',
      points: config.INBOX_AUTH_FAILURES_PER_MINUTE,
      windowSeconds: 60,
      describe: `requests with a wrong API key from this address: at most ${config.INBOX_AUTH_FAILURES_PER_MINUTE} per minute`,
      redis,
    }),
  };
  return {
    deps: {
      db,
      logger,
      metrics,
      config,
      storage,
      mailer,
      content,
      crashPoint,
      downloadSecret,
      jobs,
      languageModel,
      summaries,
      events,
      feed,
      apiKeys: keyDirectory(db),
      webhookClient,
      limits,
    },
    close: async () => {
      // Jobs still running get no grace here: server.ts stops the worker first, with its grace.
      await jobs.stop(0);
      await events.close();
      await webhookClient.close();
      await mailer.close();
      await content.close();
      await redis?.quit();
    },
  };
}

/** For development: a key kept in the data folder, so that links outlive restarts. */
async function generatedDownloadSecret(dataDir: string, logger: Logger): Promise<string> {
  const file = path.join(dataDir, 'download-url-secret');
  logger.warn(
    { secretFile: file },
    'INBOX_DOWNLOAD_URL_SECRET is not set: download links are signed with a key generated in DATA_DIR; replicas on other data folders need INBOX_DOWNLOAD_URL_SECRET',
  );
  return generatedSecret(file);
}
