/**
 * Background jobs on pg-boss, in an app's own Postgres (schema `pgboss`, created by pg-boss itself,
 * apart from the app's migrations). An app lists its jobs in a catalog (name → payload schema,
 * retries, handler); the API queues them, in the transaction that records what they are for when
 * it has one; workers run them. A running job sends a heartbeat: one whose process stopped is
 * failed when it goes quiet, then retried, and handed to the catalog's `gaveUp` once out of
 * retries (through a dead-letter queue), so that no record is left saying it runs.
 *
 * Waking: a job queued in another process reaches this one's idle workers by Postgres
 * LISTEN/NOTIFY (pg-boss's listener on a connection of its own; the NOTIFY commits with the job),
 * so it starts at once rather than at the next poll; polling stays, every `pollSeconds`, for what
 * no notification announces (a delayed job or retry coming due, a job a group limit put back, a
 * notification lost while the listener reconnected) and for databases without LISTEN.
 *
 * pg-boss's own connections commit asynchronously (synchronous_commit off): taking a job, completing
 * or failing it no longer waits for the disk. A crash of the database server may lose the last
 * fraction of a second of that bookkeeping, which runs a job again: handlers are made to be run
 * again anyway (a worker may die at any point). A send belongs in the app's transaction (`tx`), which
 * commits as the app's transactions do; one without it commits asynchronously as well.
 */
import { preparedQuery, type PreparingClient } from '@repo/db';
import { fromPrisma, PgBoss, type PrismaTransactionLike, type QueuePolicy } from 'pg-boss';
import type { z } from 'zod';

/** What a handler gets besides its payload. */
export interface JobContext {
  /** Aborted when the worker stops (and the wait for the handler ends) or the job was taken from it: stop, and leave it to a retry. */
  signal: AbortSignal;
  /** From 0; the attempt that a retry is. */
  attempt: number;
}

export interface JobDefinition<D, P extends z.ZodType = z.ZodType> {
  payload: P;
  /** Attempts after the first, for a handler that threw or a process that stopped while running it. */
  retryLimit: number;
  /** Before the first retry; doubles for each next one. */
  retryDelaySeconds: number;
  /** How long an attempt may run before it is failed (and retried). */
  expireInSeconds: number;
  /**
   * `short`: at most one job per `key` waits to run (another may be running), so that a burst of
   * sends with the same key, delayed by `delaySeconds`, makes one run. Default: every send is a job.
   */
  policy?: Extract<QueuePolicy, 'standard' | 'short'>;
  /**
   * How many jobs of this kind a process runs at once: `perProcess` (default 1), of which at most
   * `perGroup` of one group (a send's `group`). pg-boss counts a process's groups in memory and puts
   * back a job it fetched past the limit, so the limit is exact in each process; processes do not
   * count each other's (pg-boss's database-wide group count lets two fetches at the same moment
   * both pass). Default: one at a time, groups unlimited.
   */
  concurrency?(deps: D): { perProcess: number; perGroup?: number };
  handle(deps: D, payload: z.output<P>, context: JobContext): Promise<void>;
  /** After the last attempt failed (or its process stopped): leaves the records as they must be then. */
  gaveUp?(deps: D, payload: z.output<P>, reason: string): Promise<void>;
}

/** Definitions of different payload types: `handle` and `gaveUp` are methods, so each fits. */
export type JobCatalog<D> = Record<string, JobDefinition<D>>;

/** Writes a catalog entry with its payload type inferred. */
export const defineJob = <D, P extends z.ZodType>(definition: JobDefinition<D, P>) => definition;

export type JobPayload<C extends JobCatalog<never>, N extends keyof C> = z.input<C[N]['payload']>;

/** A node-postgres client inside a transaction the app began (BEGIN ... COMMIT on that client). */
export type SqlTransactionClient = PreparingClient;

export interface SendOptions {
  /** The app's transaction, Prisma's or node-postgres's: the job exists only if it commits. */
  tx?: PrismaTransactionLike | SqlTransactionClient;
  /** Runs no sooner than this. */
  delaySeconds?: number;
  /** With policy `short`: a send while a job with this key still waits adds nothing. */
  key?: string;
  /** The group the job counts in for its definition's `concurrency.perGroup` (e.g. its tenant). */
  group?: string;
  /** Waiting jobs are taken highest priority first, equal priorities in the order they were queued. Default 0. */
  priority?: number;
}

export interface JobQueue<D, C extends JobCatalog<D>> {
  /**
   * Connects and makes the catalog's queues (pg-boss installs its schema in a database that has
   * none), once: `send` and `work` do it on first use. A first `send` inside the caller's
   * transaction does it while holding that transaction's connection, so start first where many
   * transactions may send at once.
   */
  start(): Promise<void>;
  /** Queues a job. Answers false when policy `short` dropped it (one with its key already waits). */
  send<N extends keyof C & string>(name: N, payload: JobPayload<C, N>, options?: SendOptions): Promise<boolean>;
  /**
   * Has this process's workers look for `name` jobs now rather than at their next poll, for `jobs`
   * just committed (default 1): as many idle workers; those there are and every busy one (which
   * looks again once done) when fewer are idle. Waking only as many as there are jobs spares the
   * others a fetch that finds nothing.
   */
  wake(name: keyof C & string, jobs?: number): void;
  /**
   * Runs every catalog job in this process, as many at a time per kind as its `concurrency` says
   * (one by default). A worker that has finished a job looks for the next one at once.
   */
  work(deps: D): Promise<void>;
  /** Stops: jobs running get `graceSeconds` to finish, then are released (failed, so retried) and their signals aborted. */
  stop(graceSeconds: number): Promise<void>;
}

export interface JobQueueOptions {
  databaseUrl: string;
  /** The embedded database (PGlite behind its socket server), which takes few connections. */
  embedded: boolean;
  /** Names the connections in pg_stat_activity. */
  applicationName: string;
  logger: { error(details: object, message: string): void; warn(details: object, message: string): void };
  /** How often idle workers look for jobs besides being woken (by NOTIFY, or `wake` in this process). */
  pollSeconds: number;
  heartbeatSeconds: number;
  /** This process runs jobs, so it also fails those whose process stopped. */
  supervise: boolean;
}

const deadLetterQueue = (name: string) => `${name}.gave-up`;

export function createJobQueue<D, C extends JobCatalog<D>>(catalog: C, options: JobQueueOptions): JobQueue<D, C> {
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    application_name: options.applicationName,
    backend: options.embedded ? 'pglite' : 'postgres',
    // The embedded database takes ten connections in all, the app's pool among them.
    max: options.embedded ? 2 : 4,
    schedule: false,
    registerInstance: false,
    supervise: options.supervise,
    // The monitor pass is what fails a job whose heartbeat stopped (its process died); by default
    // it runs once a minute, so a dead process's job would wait that long on top of the heartbeat.
    superviseIntervalSeconds: Math.max(1, Math.floor(options.heartbeatSeconds / 4)),
    monitorIntervalSeconds: Math.max(1, Math.floor(options.heartbeatSeconds / 4)),
    ...(options.embedded ? {} : { options: '-c synchronous_commit=off' }),
    // One more connection, held for LISTEN. Not on the embedded database: it takes few connections,
    // and its single process queues and works alike (`wake` reaches its workers).
    useListenNotify: !options.embedded,
  });
  boss.on('error', (error: unknown) => options.logger.error({ err: error }, 'background jobs: pg-boss error'));
  boss.on('warning', (warning: unknown) => options.logger.warn({ warning }, 'background jobs: pg-boss warning'));
  const entries = Object.entries(catalog) as [keyof C & string, JobDefinition<D>][];
  let started: Promise<void> | undefined;
  let stopped = false;

  // A woken worker fetches at once, or, when busy, as soon as its job is done; a fetch is a round
  // trip and a locking query, so only the workers that may find a job are woken.
  const workersOf = (name: string) => boss.getWipData().filter((worker) => worker.name === name);
  const wake = (name: string, jobs = 1) => {
    const workers = workersOf(name);
    const idle = workers.filter((worker) => worker.count === 0);
    for (const worker of idle.length >= jobs ? idle.slice(0, jobs) : workers) boss.notifyWorker(worker.id);
  };
  // A job just done: the busy workers (the one that ran it among them) look again once done. A job
  // queued meanwhile (or put back by a group limit) is found so; the idle ones were woken for any
  // job queued since, in this process by `wake`, from others by NOTIFY.
  const wakeBusy = (name: string) => {
    for (const worker of workersOf(name)) if (worker.count > 0) boss.notifyWorker(worker.id);
  };

  // Started on first use, so that a process that never queues or runs a job never connects for it.
  const start = () =>
    (started ??= (async () => {
      await boss.start();
      for (const [name, job] of entries) {
        const deadLetter = job.gaveUp ? deadLetterQueue(name) : undefined;
        if (deadLetter) await boss.createQueue(deadLetter, { retryLimit: 5, retryDelay: 5, retryBackoff: true });
        const settings = {
          retryLimit: job.retryLimit,
          retryDelay: job.retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: job.expireInSeconds,
          heartbeatSeconds: options.heartbeatSeconds,
          ...(deadLetter ? { deadLetter } : {}),
        };
        // notify: a job sent commits a NOTIFY with it, which wakes the listening workers of every process.
        await boss.createQueue(name, { ...settings, notify: true, policy: job.policy ?? 'standard' });
        // A queue made by an older version keeps its settings otherwise (its policy cannot change).
        await boss.updateQueue(name, { ...settings, notify: true });
      }
    })());

  return {
    start,

    async send(name, payload, sendOptions = {}) {
      await start();
      const data = catalog[name]!.payload.parse(payload) as object;
      const id = await boss.send(name, data, {
        ...(sendOptions.tx ? { db: transactionOf(sendOptions.tx) } : {}),
        ...(sendOptions.delaySeconds ? { startAfter: sendOptions.delaySeconds } : {}),
        ...(sendOptions.key ? { singletonKey: sendOptions.key } : {}),
        ...(sendOptions.group ? { group: { id: sendOptions.group } } : {}),
        ...(sendOptions.priority ? { priority: sendOptions.priority } : {}),
      });
      return id !== null;
    },

    wake,

    async work(deps) {
      await start();
      for (const [name, job] of entries) {
        const concurrency = job.concurrency?.(deps);
        await boss.work(
          name,
          {
            pollingIntervalSeconds: options.pollSeconds,
            // While NOTIFY wakes the workers, polling stays as it was: the backstop for what no NOTIFY announces.
            notifyPollingIntervalSeconds: options.pollSeconds,
            includeMetadata: true,
            localConcurrency: concurrency?.perProcess ?? 1,
            ...(concurrency?.perGroup ? { localGroupConcurrency: concurrency.perGroup } : {}),
          },
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
            } finally {
              // Rather than after the poll interval: the next job (or one a group limit held back) may be waiting.
              wakeBusy(name);
            }
          },
        );
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

/**
 * pg-boss's way into the app's transaction. On a node-postgres client its insert runs prepared:
 * its text is one per queue, and Postgres planned it in several times what it takes to run.
 */
function transactionOf(tx: PrismaTransactionLike | SqlTransactionClient) {
  if ('$queryRawUnsafe' in tx) return fromPrisma(tx);
  return { executeSql: async (text: string, values: unknown[] = []) => ({ rows: await preparedQuery(tx, { text, values }) }) };
}

/** What pg-boss recorded of the last attempt's failure: the handler's error, or why it was failed (a heartbeat or expiry). */
function failureReason(output: object | null): string {
  const message = (output as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : 'it stopped without finishing';
}

export { type Periodic, startPeriodic } from './periodic.js';
