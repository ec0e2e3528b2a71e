/**
 * The worker's side of a query job (catalog entry `query-job`): start it under the tenant's usage
 * lock (a quota used up meanwhile fails it), run it on the warehouse with the tables its project
 * may read, then record the measurements and charge its cost in one transaction. While it runs,
 * the job's row is read every half second for a cancel (which another process may have asked
 * for): the query is then stopped, and the job ends CANCELLED, charged what the warehouse processed.
 */
import { startPeriodic } from '@repo/jobs';
import { NotFoundError } from '@repo/errors';
import type { Prisma, QueryJob } from '../generated/prisma/client.js';
import { recordReads } from '../access-log/record.js';
import { QueryFailure, type QueryUsage } from '../adapters/warehouse/query/index.js';
import { findReachableProject } from '../associations/access.js';
import { commitAsynchronously, type Database, type Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import type { JobContext } from '../jobs/catalog.js';
import { formatUsd } from '../quota/rules.js';
import { chargeJob, quotaLeft } from '../quota/service.js';
import { readableCatalog } from './readable.js';
import { CANCELLED_BY_REQUEST, resultsExpireAt, workerMayRun } from './states.js';

type Failure = { reason: string; message: string };

// How often a running job's row is read for a cancel.
const CANCEL_CHECK_SECONDS = 0.5;

/** What a job's row records of its charge (charge()). */
type Charged = { totalBytesProcessed?: bigint; totalBytesBilled?: bigint; costUsd?: string };

/** Ends a job that has not ended: FAILED with `failure`, or CANCELLED, with what it was `charged`. */
async function end(
  db: Database | Transaction,
  jobId: string,
  outcome: { status: 'FAILED'; failure: Failure } | { status: 'CANCELLED' },
  charged: Charged = {},
): Promise<void> {
  const failure = outcome.status === 'FAILED' ? outcome.failure : CANCELLED_BY_REQUEST;
  await db.queryJob.updateMany({
    where: { id: jobId, status: { in: ['PENDING', 'RUNNING'] } },
    data: { status: outcome.status, endedAt: new Date(), errorResult: failure, errorDetails: { errors: [failure] }, ...charged },
  });
}

export async function runQueryJob(deps: Deps, jobId: string, context: JobContext): Promise<void> {
  let done: QueryJob | undefined;
  try {
    done = await run(deps, jobId, context);
  } finally {
    // Requests waiting for its results take the DONE row, or read it again (ended otherwise, or not: a stopped
    // worker leaves it for a retry).
    deps.queryJobEnds.ended(jobId, done);
  }
}

/** Runs the job; answers its row once it is DONE (committed). */
async function run(deps: Deps, jobId: string, context: JobContext): Promise<QueryJob | undefined> {
  // The job and its query's project side by side (one round trip instead of Prisma's two for an include).
  const [job, projectId] = await Promise.all([
    deps.db.queryJob.findUnique({ where: { id: jobId } }),
    queryProjectOf(deps.db, jobId),
  ]);
  if (!job || !workerMayRun(job.status) || projectId === undefined) return;
  // Side by side with the start: the project's reach and the catalog, which the query needs once it is found
  // reachable (it nearly always is); an unreachable project fails the job just after its start.
  // The catalog holds the rules of other tenants' tables as they are now: the job applies these, whatever changes while it runs.
  const [started, reachable, catalog] = await Promise.all([
    startJob(deps, job),
    findReachableProject(deps.db, { tenantId: job.tenantId }, projectId).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }),
    readableCatalog(deps.db, { projectId, tenantId: job.tenantId }),
  ]);
  if (!started) return;
  if (!reachable) {
    await end(deps.db, job.id, {
      status: 'FAILED',
      failure: { reason: 'accessDenied', message: "The query's project is no longer reachable by your tenant" },
    });
    return;
  }
  // The run's own limit is at most the service's (checked when it was asked for).
  const timeoutSeconds = job.timeoutSeconds ?? deps.config.COLLAB_QUERY_TIMEOUT_SECONDS;
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const cancel = new AbortController();
  const watch = startPeriodic(
    async () => {
      const current = await deps.db.queryJob.findUnique({ where: { id: job.id }, select: { cancelRequestedAt: true } });
      if (current?.cancelRequestedAt) cancel.abort();
    },
    {
      intervalSeconds: CANCEL_CHECK_SECONDS,
      // A cancel asked for before the start cancelled the PENDING job itself: the first look can wait.
      startAfterInterval: true,
      onError: (error) =>
        deps.logger.warn({ err: error, queryJobId: job.id }, 'could not check a running query job for a cancel'),
    },
  );
  let outcome;
  try {
    outcome = await deps.queryEngine.run({
      jobId: job.id,
      sql: job.queryText,
      catalog,
      signal: AbortSignal.any([context.signal, timeout, cancel.signal]),
      onTables: (keys) => recordReads(deps.db, job, catalog, keys),
      maximumBytesBilled: job.maximumBytesBilled ?? undefined,
    });
  } catch (error) {
    // A stopped worker leaves the job RUNNING for a retry; a query the warehouse refused, or one that ran too long, fails it.
    if (!(error instanceof QueryFailure) || context.signal.aborted) throw error;
    if (error.reason !== 'stopped') {
      await end(deps.db, job.id, { status: 'FAILED', failure: { reason: error.reason, message: error.message } });
      return;
    }
    // Stopped by a cancel or the timeout: charged what the warehouse processed until then, as BigQuery charges.
    deps.crashPoint('query_job:stopped');
    const ended = cancel.signal.aborted
      ? ({ status: 'CANCELLED' } as const)
      : ({
          status: 'FAILED',
          failure: { reason: 'timeout', message: `The query ran longer than ${timeoutSeconds} s and was stopped` },
        } as const);
    await deps.db.$transaction(async (tx) => {
      const charged = error.usage && error.usage.bytesBilled > 0 ? await charge(tx, deps, job, error.usage) : {};
      await end(tx, job.id, ended, charged);
    });
    deps.crashPoint('query_job:stopped-recorded');
    return;
  } finally {
    await watch.stop();
  }
  // Killed here, the retry runs the query again: the result table is replaced, and nothing was charged yet.
  deps.crashPoint('query_job:result-stored');
  const ended = new Date();
  const done = await deps.db.$transaction(async (tx) => {
    await commitAsynchronously(tx);
    const charged = await charge(tx, deps, job, outcome);
    return tx.queryJob.update({
      where: { id: job.id },
      data: {
        ...charged,
        status: 'DONE',
        endedAt: ended,
        resultsExpireAt: resultsExpireAt(ended, deps.config.COLLAB_RESULT_TTL_DAYS),
        totalRows: BigInt(outcome.totalRows),
        totalSlotMs: BigInt(outcome.elapsedMs),
        cacheHit: outcome.cacheHit,
        numDmlAffectedRows: outcome.numDmlAffectedRows === null ? null : BigInt(outcome.numDmlAffectedRows),
        destinationTable: outcome.destinationTable ?? undefined,
        statistics: (outcome.statistics ?? undefined) as Prisma.InputJsonValue | undefined,
        resultColumns: outcome.columns as unknown as Prisma.InputJsonValue,
        privateRowCount: BigInt(outcome.privateRowCount),
        suppressedRowCount: BigInt(outcome.suppressedRowCount),
      },
    });
  });
  // Killed here, pg-boss retries a job that is DONE: workerMayRun turns it away, so it is charged once.
  deps.crashPoint('query_job:done');
  return done;
}

/** The project of the job's saved query (as it is now: a query may move); none for a job that is gone. */
async function queryProjectOf(db: Database, jobId: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ project_id: string }[]>`
    SELECT q.project_id::text AS project_id FROM query_jobs j JOIN queries q ON q.id = j.query_id WHERE j.id = ${jobId}::uuid`;
  return row?.project_id;
}

/**
 * Starts the job under its tenant's usage lock: false when it is not to run (a cancel its stopped
 * attempt did not finish, a quota used up meanwhile: it is ended so) or has ended meanwhile.
 */
async function startJob(deps: Deps, job: QueryJob): Promise<boolean> {
  return deps.db.$transaction(async (tx) => {
    await commitAsynchronously(tx);
    // A retry of a job whose cancel its stopped attempt did not finish: nothing is known of what it processed.
    if (job.cancelRequestedAt) {
      await end(tx, job.id, { status: 'CANCELLED' });
      return false;
    }
    const refusal = await quotaLeft(tx, deps.config, job.tenantId);
    if (refusal) {
      await end(tx, job.id, { status: 'FAILED', failure: { reason: 'quotaExceeded', message: refusal.message } });
      return false;
    }
    const { count } = await tx.queryJob.updateMany({
      where: { id: job.id, status: { in: ['PENDING', 'RUNNING'] } },
      data: { status: 'RUNNING', startedAt: job.startedAt ?? new Date() },
    });
    return count > 0;
  });
}

/** Charges the job for `usage` in the caller's transaction; answers what the job's row is to record of it. */
async function charge(
  tx: Transaction,
  deps: Deps,
  job: { id: string; tenantId: string; queryId: string },
  usage: QueryUsage,
): Promise<Required<Charged>> {
  const cost = await chargeJob(tx, deps.config, {
    tenantId: job.tenantId,
    queryId: job.queryId,
    jobId: job.id,
    bytesProcessed: BigInt(usage.bytesProcessed),
    bytesBilled: BigInt(usage.bytesBilled),
  });
  return {
    totalBytesProcessed: BigInt(usage.bytesProcessed),
    totalBytesBilled: BigInt(usage.bytesBilled),
    costUsd: formatUsd(cost),
  };
}

/** Out of retries (its worker kept stopping): the job fails rather than staying RUNNING. */
export async function queryJobGaveUp(deps: Deps, jobId: string): Promise<void> {
  await end(deps.db, jobId, {
    status: 'FAILED',
    failure: { reason: 'backendError', message: 'The job stopped before it finished, and its retries ran out' },
  });
}
