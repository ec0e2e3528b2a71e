import { boolean, integer, oneOf, port, postgresUrl, string, url } from './settings.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Settings of every process that listens for HTTP. */
export function httpSettings(defaults: { port: number }) {
  return {
    PORT: port().default(defaults.port),
    /** 127.0.0.1 by default so a developer machine exposes nothing; images set 0.0.0.0. */
    HOST: string().default('127.0.0.1'),
    LOG_LEVEL: oneOf(LOG_LEVELS).default('info'),
    /** How long in-flight requests may run after SIGTERM before connections are cut. */
    SHUTDOWN_TIMEOUT_MS: integer({ min: 0, max: 600_000 }).default(25_000),
    /** Hops of trusted proxies in front of the service (for the client address); 0 trusts none. */
    TRUST_PROXY_HOPS: integer({ min: 0, max: 10 }).default(0),
  };
}

/** Settings of an API that owns a database and local files. */
export function storageSettings() {
  return {
    /** Postgres to use; unset, an embedded database under DATA_DIR is started and migrated. */
    DATABASE_URL: postgresUrl().optional(),
    DB_POOL_SIZE: integer({ min: 1, max: 100 }).default(10),
    MIGRATE_ON_START: boolean().default(false),
    /** Local files: embedded database, stored objects. Default: `.data` in the app's folder. */
    DATA_DIR: string().optional(),
    /** Base of links the service hands out; default http://127.0.0.1:<PORT>. */
    PUBLIC_BASE_URL: url().optional(),
  };
}
