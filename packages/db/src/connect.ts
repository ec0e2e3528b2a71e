import path from 'node:path';
import { type EmbeddedExtension, openEmbeddedPostgres } from './embedded.js';
import { redactUrl } from '@repo/config';
import { migrateDatabase, type MigrationLogger } from './migrations.js';

export interface DatabaseConnection {
  /** Connection string for the app's pool. */
  url: string;
  /** Pool size the app should use. */
  poolSize: number;
  /** Its connections share one session (the embedded database): pass to createPool. */
  sharedSession: boolean;
  /** Stops the embedded database, if one was started; call after the app's pools are closed. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** DATABASE_URL; unset means an embedded database under `dataDir`. */
  url?: string;
  dataDir: string;
  migrationsDir: string;
  /** Migrate (creating the database if needed) when a URL is given; the embedded one is always migrated. */
  migrateOnStart: boolean;
  poolSize: number;
  extensions?: EmbeddedExtension[];
  logger: MigrationLogger & { warn(fields: object, message: string): void };
}

/** Resolves the database an API runs on, as settled in the contract's Operations section. */
export async function connectDatabase(options: ConnectOptions): Promise<DatabaseConnection> {
  if (options.url) {
    if (options.migrateOnStart) {
      await migrateDatabase(options.url, options.migrationsDir, { createDatabase: true, logger: options.logger });
    }
    options.logger.info({ database: redactUrl(options.url) }, 'using Postgres');
    return { url: options.url, poolSize: options.poolSize, sharedSession: false, close: async () => {} };
  }
  const dataDir = path.join(options.dataDir, 'postgres');
  const embedded = await openEmbeddedPostgres({ dataDir, extensions: options.extensions });
  if (embedded.shared) {
    options.logger.info({ dataDir, ownerPid: embedded.ownerPid }, 'using the embedded database served by another process');
  } else {
    options.logger.warn(
      { dataDir },
      'DATABASE_URL is not set: using an embedded database (this machine only, not for production)',
    );
  }
  try {
    await migrateDatabase(embedded.url, options.migrationsDir, { logger: options.logger });
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  // PGlite is a single session: one pooled connection keeps each transaction to itself.
  return { url: embedded.url, poolSize: 1, sharedSession: true, close: () => embedded.stop() };
}
