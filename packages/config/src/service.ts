import { boolean, integer, oneOf, port, postgresUrl, string, url } from './settings.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Settings of every process that listens for HTTP. */
export function httpSettings(defaults: { port: number }) {
  return {
    PORT: port().default(defaults.port).describe('TCP port to listen on (0: any free port).'),
    HOST: string()
      .default('127.0.0.1')
      .describe('Address to listen on. The default exposes nothing beyond this machine; container images set 0.0.0.0.'),
    LOG_LEVEL: oneOf(LOG_LEVELS).default('info').describe('Least severe level written to the JSON log on stdout.'),
    SHUTDOWN_TIMEOUT_MS: integer({ min: 0, max: 600_000 })
      .default(25_000)
      .describe('After SIGTERM, how long in-flight requests may run before their connections are cut.'),
    TRUST_PROXY_HOPS: integer({ min: 0, max: 10 })
      .default(0)
      .describe('Proxies in front of the service whose X-Forwarded-For is trusted for the client address.'),
  };
}

/** Settings of an API that owns a database and local files. */
export function storageSettings() {
  return {
    DATABASE_URL: postgresUrl()
      .optional()
      .describe('Postgres to use. Unset: an embedded database under DATA_DIR, started and migrated with the service.'),
    DB_POOL_SIZE: integer({ min: 1, max: 100 }).default(10).describe('Connections in the database pool of each process.'),
    MIGRATE_ON_START: boolean()
      .default(false)
      .describe('Create and migrate DATABASE_URL at start-up (otherwise run `pnpm db:migrate` or the migration Job).'),
    DATA_DIR: string()
      .optional()
      .describe("Folder for local files: embedded database, stored objects. Default: `.data` in the app's folder."),
    PUBLIC_BASE_URL: url()
      .optional()
      .describe('Base of the links the service hands out, as clients reach it. Default: `http://127.0.0.1:<PORT>`.'),
  };
}
