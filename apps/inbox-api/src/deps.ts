import path from 'node:path';
import type { Logger, Metrics } from '@repo/http';
import { connectRedis, createRateLimit, type RateLimit } from '@repo/rate-limit';
import { createObjectStorage, type ObjectStorage } from '@repo/storage';
import { createMailTransport, type MailTransport } from './adapters/mail/index.js';
import type { Config } from './config.js';
import type { Database } from './database.js';
import { deliverLocally } from './messages/local-delivery.js';
import { defaultDataDir } from './paths.js';

/** Everything the app talks to, built by createDeps (for server.ts and tests) and passed to buildApp. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  storage: ObjectStorage;
  mailer: MailTransport;
  limits: {
    /** Requests per minute per API key (per client address when the API is open). */
    requests: RateLimit;
    /** Sends per inbox per hour. */
    sends: RateLimit;
  };
}

/**
 * Builds the app's adapters from its configuration: object storage, the mail transport, and the
 * rate limits (in Redis when REDIS_URL is set). `close` releases what they hold.
 */
export async function createDeps(
  config: Config,
  base: { db: Database; logger: Logger; metrics: Metrics },
): Promise<{ deps: Deps; close: () => Promise<void> }> {
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL) : undefined;
  const storage = createObjectStorage(config, { localRoot: path.join(config.DATA_DIR ?? defaultDataDir, 'objects') });
  const emailDomain = config.INBOX_EMAIL_DOMAIN;
  const mailer = createMailTransport(config, {
    deliverLocally: (mail) => deliverLocally({ db: base.db, storage, emailDomain }, mail),
  });
  const limits = {
    requests: createRateLimit({
      keyPrefix: 'inbox:requests',
      points: config.INBOX_RATE_LIMIT_PER_MINUTE,
      windowSeconds: 60,
      describe: `requests: at most ${config.INBOX_RATE_LIMIT_PER_MINUTE} per minute`,
      redis,
    }),
    sends: createRateLimit({
      keyPrefix: 'inbox:sends',
      points: config.INBOX_SEND_LIMIT_PER_HOUR,
      windowSeconds: 3600,
      describe: `sends from this inbox: at most ${config.INBOX_SEND_LIMIT_PER_HOUR} per hour`,
      redis,
    }),
  };
  return {
    deps: { ...base, config, storage, mailer, limits },
    close: async () => {
      await mailer.close();
      await redis?.quit();
    },
  };
}
