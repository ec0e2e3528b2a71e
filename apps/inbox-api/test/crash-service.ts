import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { createDatabaseClient, type Database } from '../src/database.js';
import { appRoot, migrationsDir } from '../src/paths.js';

type Env = Record<string, string | undefined>;

/**
 * For the kill -9 tests: the service as its own process (src/server.ts, with its job worker and
 * reconciler) on a scratch database and data folder that outlive each process, so that a restart
 * finds what the killed one left. `start` runs it (TEST_CRASH_POINT makes it SIGKILL itself at the
 * named step); `crashDuring` runs one request into such a kill. Call at the top of a test file: it
 * registers the beforeAll/afterAll that create and drop the database and folder.
 */
export function crashTestService(options: { label: string; domain: string; env?: Env }) {
  let database: ScratchDatabase;
  let dataDir: string;
  let db: Database;
  beforeAll(async () => {
    database = await createScratchDatabase({ label: options.label, migrationsDir });
    dataDir = await mkdtemp(path.join(os.tmpdir(), `${options.label}-`));
    db = createDatabaseClient(database.url, 2);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = (env: Env = {}) =>
    startService('src/server.ts', {
      cwd: appRoot,
      env: {
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        PORT: '0',
        // info: startService waits for the "listening" line.
        LOG_LEVEL: 'info',
        INBOX_EMAIL_DOMAIN: options.domain,
        INBOX_RATE_LIMIT_PER_MINUTE: '0',
        INBOX_SEND_LIMIT_PER_HOUR: '0',
        INBOX_API_KEYS: undefined,
        ...options.env,
        ...env,
      },
      timeoutMs: 90_000,
      keepLogs: false,
    });

  return {
    /** A client of the scratch database, for what the API does not show. */
    get db() {
      return db;
    },
    get dataDir() {
      return dataDir;
    },
    start,
    /** Starts the service set to die at `point`, sends `request`, and checks that it died by SIGKILL. */
    crashDuring: async (point: string, request: (baseUrl: string) => Promise<unknown>, env: Env = {}) => {
      const service = await start({ ...env, TEST_CRASH_POINT: point });
      const exited = once(service.child, 'exit');
      await request(service.url).catch(() => undefined);
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
    },
  };
}

/** One JSON request; the body is undefined when the answer is not JSON (or there was none). */
export async function call<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T | undefined }> {
  const res = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as T | undefined };
}
