import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createScratchDatabase } from '@repo/db/dev';
import type pg from 'pg';
import { type ServiceProcess, startService } from '@repo/testing';
import { appRoot, migrationsDir } from '../src/paths.js';

/**
 * Runs `bench` against the server as its own process with production settings (open API, no
 * request limit, glibc's heap settings of infra/docker/inbox-api.Dockerfile) on a scratch database
 * of TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432) and a data folder
 * of its own; `env` adds or overrides settings, `options.nodeArgs` are given to node (a CPU profile's
 * flags, say). Stops the server and removes both afterwards.
 */
export async function withBenchService<T>(
  label: string,
  env: Record<string, string | undefined>,
  bench: (service: ServiceProcess, databaseUrl: string) => Promise<T>,
  options: { nodeArgs?: string[] } = {},
): Promise<T> {
  const database = await createScratchDatabase({ label: `inbox_${label}_bench`, migrationsDir });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `inbox-${label}-bench-`));
  try {
    const service = await startService('src/server.ts', {
      cwd: appRoot,
      env: {
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        PORT: '0',
        LOG_LEVEL: 'info',
        INBOX_EMAIL_DOMAIN: 'bench.test',
        INBOX_RATE_LIMIT_PER_MINUTE: '0',
        INBOX_API_KEYS: undefined,
        MALLOC_MMAP_THRESHOLD_: '33554432',
        MALLOC_TRIM_THRESHOLD_: '134217728',
        ...env,
      },
      timeoutMs: 60_000,
      keepLogs: false,
      nodeArgs: options.nodeArgs,
    });
    try {
      return await bench(service, database.url);
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Asks `${url}/health` one request after another, `intervalMs` apart, from a worker thread of its
 * own (so that what this process does meanwhile, sending or reading large bodies, does not count in
 * its times), after one request not timed (which loads fetch and opens the connection). Resolves
 * once it is timing, to a function that stops it and resolves to the slowest answer in ms: how long
 * the server made another request wait meanwhile.
 */
export async function probeHealth(url: string, options: { intervalMs: number }): Promise<() => Promise<number>> {
  const probe = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     let running = true;
     parentPort.once('message', () => (running = false));
     (async () => {
       await (await fetch(workerData.url + '/health')).arrayBuffer();
       parentPort.postMessage('timing');
       let slowest = 0;
       while (running) {
         const sent = performance.now();
         await (await fetch(workerData.url + '/health')).arrayBuffer();
         slowest = Math.max(slowest, performance.now() - sent);
         if (workerData.intervalMs > 0) await new Promise((resolve) => setTimeout(resolve, workerData.intervalMs));
       }
       parentPort.postMessage(slowest);
     })();`,
    { eval: true, workerData: { url, intervalMs: options.intervalMs } },
  );
  await once(probe, 'message');
  return async () => {
    const slowest = once(probe, 'message') as Promise<[number]>;
    probe.postMessage('stop');
    const [ms] = await slowest;
    await probe.terminate();
    return ms;
  };
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/**
 * CPU ms so far (user + system, from /proc: Postgres on this machine) of the backends of `db`'s
 * database, but `db`'s own.
 */
export async function postgresCpuMs(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  let cpuMs = 0;
  for (const { pid } of rows) {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.split(' ');
    if (fields) cpuMs += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  }
  return cpuMs;
}
