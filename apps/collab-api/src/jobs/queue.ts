/**
 * Background jobs on pg-boss, in the service's own Postgres (its schema `pgboss`, created by
 * pg-boss itself, apart from the app's migrations). The API queues jobs, in the transaction that
 * records what they are for when it has one; workers run them (see worker.ts). A running job
 * sends a heartbeat: one whose process stopped is failed when it goes quiet, then retried, and
 * handed to the catalog's `gaveUp` once out of retries (through a dead-letter queue), so that no
 * record is left saying it runs.
 */
import type { Logger } from '@repo/http';
import { fromPrisma, PgBoss } from 'pg-boss';
import type { Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import { type JobDefinition, type JobName, type JobPayload, JOBS } from './catalog.js';

export interface JobQueue {
  /** Queues a job; with `tx`, as part of that transaction (the job exists only if it commits). */
  send<N extends JobName>(name: N, payload: JobPayload<N>, options?: { tx?: Transaction }): Promise<void>;
  /** Has this process's worker look for `name` jobs now rather than at its next poll (a job just committed). */
  wake(name: JobName): void;
  /** Runs every catalog job in this process, one at a time per kind (DuckDB is one process's). */
  work(deps: Deps): Promise<void>;
  /** Stops: jobs running get `graceSeconds` to finish, then are released (failed, so retried) and their signals aborted. */
  stop(graceSeconds: number): Promise<void>;
}

export interface JobQueueOptions {
  databaseUrl: string;
  /** The embedded database (PGlite behind its socket server). */
  embedded: boolean;
  logger: Logger;
  pollSeconds: number;
  heartbeatSeconds: number;
  /** This process runs jobs (COLLAB_WORKER inline or only), so it also fails those whose process stopped. */
  supervise: boolean;
}

const deadLetterQueue = (name: string) => `${name}.gave-up`;

export function createJobQueue(options: JobQueueOptions): JobQueue {
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    application_name: 'collab-api jobs',
    backend: options.embedded ? 'pglite' : 'postgres',
    // The embedded database takes ten connections in all, the app's pool among them.
    max: options.embedded ? 2 : 4,
    schedule: false,
    registerInstance: false,
    supervise: options.supervise,
    superviseIntervalSeconds: Math.max(1, Math.floor(options.heartbeatSeconds / 4)),
  });
  boss.on('error', (error: unknown) => options.logger.error({ err: error }, 'background jobs: pg-boss error'));
  boss.on('warning', (warning: unknown) => options.logger.warn({ warning }, 'background jobs: pg-boss warning'));
  const workers = new Map<JobName, string>();
  let started: Promise<void> | undefined;
  let stopped = false;

  // Started on first use, so that a process that never queues or runs a job never connects for it.
  const start = () =>
    (started ??= (async () => {
      await boss.start();
      for (const [name, job] of Object.entries(JOBS) as [JobName, JobDefinition][]) {
        const deadLetter = job.gaveUp ? deadLetterQueue(name) : undefined;
        if (deadLetter) await boss.createQueue(deadLetter, { retryLimit: 5, retryDelay: 5, retryBackoff: true });
        const settings = {
          retryLimit: job.retryLimit,
          retryDelay: job.retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: job.expireInSeconds,
          heartbeatSeconds: options.heartbeatSeconds,
          deadLetter,
        };
        await boss.createQueue(name, settings);
        // A queue made by an older version keeps its settings otherwise.
        await boss.updateQueue(name, settings);
      }
    })());

  return {
    async send(name, payload, sendOptions = {}) {
      await start();
      const data = JOBS[name].payload.parse(payload) as object;
      // In the app's transaction (Prisma's), so that the job commits or rolls back with it.
      await boss.send(name, data, sendOptions.tx ? { db: fromPrisma(sendOptions.tx) } : {});
    },

    wake(name) {
      const worker = workers.get(name);
      if (worker) boss.notifyWorker(worker);
    },

    async work(deps) {
      await start();
      for (const [name, job] of Object.entries(JOBS) as [JobName, JobDefinition][]) {
        const id = await boss.work(
          name,
          { pollingIntervalSeconds: options.pollSeconds, includeMetadata: true },
          async ([received]) => {
            const payload: unknown = job.payload.parse(received!.data);
            try {
              await job.handle(deps, payload, { signal: received!.signal, attempt: received!.retryCount });
            } catch (error) {
              options.logger.error(
                { err: error, job: name, id: received!.id, attempt: received!.retryCount },
                'background job failed',
              );
              throw error;
            }
          },
        );
        workers.set(name, id);
        if (job.gaveUp) {
          const gaveUp = job.gaveUp.bind(job);
          await boss.work(
            deadLetterQueue(name),
            { pollingIntervalSeconds: options.pollSeconds, includeMetadata: true },
            async ([received]) => {
              await gaveUp(deps, job.payload.parse(received!.data), failureReason(received!.sourceOutput));
            },
          );
        }
      }
    },

    async stop(graceSeconds) {
      if (stopped || !started) return;
      stopped = true;
      await started.catch(() => undefined);
      await boss.stop({ graceful: true, timeout: graceSeconds * 1000 });
    },
  };
}

/** What pg-boss recorded of the last attempt's failure: the handler's error, or why it was failed (a heartbeat or expiry). */
function failureReason(output: object | null): string {
  const message = (output as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : 'it stopped without finishing';
}
