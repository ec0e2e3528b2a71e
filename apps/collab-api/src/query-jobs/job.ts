/**
 * The worker's side of a query job (catalog entry `query-job`): start it under the tenant's usage
 * lock (a quota used up meanwhile fails it), run it on the warehouse with the tables its project
 * may read, then record the measurements and charge its cost in one transaction.
 */
import { NotFoundError } from '@repo/errors';
import type { Prisma } from '../generated/prisma/client.js';
import { QueryFailure } from '../adapters/warehouse/query/index.js';
import { findReachableProject } from '../associations/access.js';
import type { Database, Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import type { JobContext } from '../jobs/catalog.js';
import { formatUsd } from '../quota/rules.js';
import { chargeJob, quotaLeft } from '../quota/service.js';
import { readableCatalog } from './readable.js';
import { workerMayRun } from './states.js';

type Failure = { reason: string; message: string };

async function fail(db: Database | Transaction, jobId: string, failure: Failure): Promise<void> {
  await db.queryJob.updateMany({
    where: { id: jobId, status: { in: ['PENDING', 'RUNNING'] } },
    data: {
      status: 'FAILED',
      endedAt: new Date(),
      errorResult: failure,
      errorDetails: { errors: [failure] },
    },
  });
}

export async function runQueryJob(deps: Deps, jobId: string, context: JobContext): Promise<void> {
  const job = await deps.db.queryJob.findUnique({ where: { id: jobId }, include: { query: true } });
  if (!job || !workerMayRun(job.status)) return;
  const started = await deps.db.$transaction(async (tx) => {
    const refusal = await quotaLeft(tx, deps.config, job.tenantId);
    if (refusal) {
      await fail(tx, job.id, { reason: 'quotaExceeded', message: refusal.message });
      return false;
    }
    const { count } = await tx.queryJob.updateMany({
      where: { id: job.id, status: { in: ['PENDING', 'RUNNING'] } },
      data: { status: 'RUNNING', startedAt: job.startedAt ?? new Date() },
    });
    return count > 0;
  });
  if (!started) return;
  const reachable = await findReachableProject(deps.db, { tenantId: job.tenantId }, job.query.projectId).catch(
    (error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    },
  );
  if (!reachable) {
    await fail(deps.db, job.id, { reason: 'accessDenied', message: "The query's project is no longer reachable by your tenant" });
    return;
  }
  const timeoutSeconds = deps.config.COLLAB_QUERY_TIMEOUT_SECONDS;
  let outcome;
  try {
    outcome = await deps.queryEngine.run({
      jobId: job.id,
      sql: job.queryText,
      catalog: await readableCatalog(deps.db, { projectId: job.query.projectId, tenantId: job.tenantId }),
      signal: AbortSignal.any([context.signal, AbortSignal.timeout(timeoutSeconds * 1000)]),
    });
  } catch (error) {
    // A stopped worker leaves the job RUNNING for a retry; a query the warehouse refused, or one that ran too long, fails it.
    if (!(error instanceof QueryFailure) || context.signal.aborted) throw error;
    const failure =
      error.reason === 'stopped'
        ? { reason: 'timeout', message: `The query ran longer than ${timeoutSeconds} s and was stopped` }
        : { reason: error.reason, message: error.message };
    await fail(deps.db, job.id, failure);
    return;
  }
  // Killed here, the retry runs the query again: the result table is replaced, and nothing was charged yet.
  deps.crashPoint('query_job:result-stored');
  await deps.db.$transaction(async (tx) => {
    const cost = await chargeJob(tx, deps.config, {
      tenantId: job.tenantId,
      queryId: job.queryId,
      jobId: job.id,
      bytesProcessed: BigInt(outcome.bytesProcessed),
    });
    await tx.queryJob.update({
      where: { id: job.id },
      data: {
        status: 'DONE',
        endedAt: new Date(),
        totalRows: BigInt(outcome.totalRows),
        totalBytesProcessed: BigInt(outcome.bytesProcessed),
        totalSlotMs: BigInt(outcome.elapsedMs),
        cacheHit: outcome.cacheHit,
        numDmlAffectedRows: outcome.numDmlAffectedRows === null ? null : BigInt(outcome.numDmlAffectedRows),
        destinationTable: outcome.destinationTable ?? undefined,
        statistics: (outcome.statistics ?? undefined) as Prisma.InputJsonValue | undefined,
        resultColumns: outcome.columns as unknown as Prisma.InputJsonValue,
        privateRowCount: BigInt(outcome.privateRowCount),
        costUsd: formatUsd(cost),
      },
    });
  });
  // Killed here, pg-boss retries a job that is DONE: workerMayRun turns it away, so it is charged once.
  deps.crashPoint('query_job:done');
}

/** Out of retries (its worker kept stopping): the job fails rather than staying RUNNING. */
export async function queryJobGaveUp(deps: Deps, jobId: string): Promise<void> {
  await fail(deps.db, jobId, { reason: 'backendError', message: 'The job stopped before it finished, and its retries ran out' });
}
