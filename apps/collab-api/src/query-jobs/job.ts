/**
 * The worker's side of a query job (catalog entry `query-job`): start it under the tenant's usage
 * lock (a quota used up meanwhile fails it), run it on the warehouse with the tables its project
 * may read, then record the measurements and charge its cost; the start (with the catalog) and the
 * end are one statement each (the fewer round trips, the sooner a short job is done). While it runs,
 * the job's row is read every half second for a cancel (which another process may have asked
 * for): the query is then stopped, and the job ends CANCELLED, charged what the warehouse processed.
 */
import { pgTransaction, preparedQuery } from '@repo/db';
import { startPeriodic } from '@repo/jobs';
import { Prisma } from '../generated/prisma/client.js';
import { recordReads } from '../access-log/record.js';
import { QueryFailure, type QueryOutcome, type QueryUsage, type ReadableCatalog } from '../adapters/warehouse/query/index.js';
import { isDatasetOfProjectSql, isReachableSql } from '../associations/access.js';
import { COMMIT_ASYNCHRONOUSLY, type Database } from '../database.js';
import type { Deps } from '../deps.js';
import type { JobContext } from '../jobs/catalog.js';
import { formatUsd } from '../quota/rules.js';
import { chargeEnded, quotaLeft, quotaLeftOf, type UsageText, usageRowOfText } from '../quota/service.js';
import { catalogOfTables, type ReadableTableRow, readableTablesSql } from './readable.js';
import { DEFAULT_RESULT_PAGE_SIZE } from './schemas.js';
import type { JobResults } from './service.js';
import { CANCELLED_BY_REQUEST, resultsExpireAt } from './states.js';

type Failure = { reason: string; message: string };

// How often a running job's row is read for a cancel.
const CANCEL_CHECK_SECONDS = 0.5;

/** What the worker reads of a job as it starts it (startJob). */
interface StartedJob {
  id: string;
  tenantId: string;
  projectId: string;
  /** Whether the job's tenant still reaches the project (read with the start). */
  projectReachable: boolean;
  queryText: string;
  cancelRequestedAt: Date | null;
  maximumBytesBilled: bigint | null;
  timeoutSeconds: number | null;
  /**
   * The tables the job may read, read with its start: with the rules of other tenants' tables as
   * they are now, which the job applies whatever changes while it runs.
   */
  catalog: ReadableCatalog;
}

type EndOutcome = { status: 'FAILED'; failure: Failure } | { status: 'CANCELLED' };

const failureOf = (outcome: EndOutcome) => (outcome.status === 'FAILED' ? outcome.failure : CANCELLED_BY_REQUEST);

/** Ends a job that has not ended: FAILED with `failure`, or CANCELLED. */
async function end(db: Database, jobId: string, outcome: EndOutcome): Promise<void> {
  const failure = failureOf(outcome);
  await db.queryJob.updateMany({
    where: { id: jobId, status: { in: ['PENDING', 'RUNNING'] } },
    data: { status: outcome.status, endedAt: new Date(), errorResult: failure, errorDetails: { errors: [failure] } },
  });
}

/**
 * Ends a job that will have no result: a retry may find one that its killed attempt stored
 * (`query_job:result-stored`), which nothing else would ever remove. Dropped first, so that a kill
 * between the two leaves the job to a retry that drops it again.
 */
async function endWithoutResult(deps: Deps, jobId: string, outcome: EndOutcome): Promise<void> {
  await deps.queryEngine.dropResult(jobId);
  await end(deps.db, jobId, outcome);
}

/** end(), charging what the warehouse processed until then, in one statement (charged only if this ends it). */
async function endCharged(deps: Deps, jobId: string, outcome: EndOutcome, usage: QueryUsage): Promise<void> {
  const failure = failureOf(outcome);
  const now = new Date();
  const bytes = { bytesProcessed: BigInt(usage.bytesProcessed), bytesBilled: BigInt(usage.bytesBilled) };
  const { cost, ctes } = chargeEnded(deps.config, bytes, now);
  await deps.db.$queryRaw`
    WITH ended AS (
      UPDATE query_jobs
         SET status = ${outcome.status}::query_job_status, ended_at = ${now}, updated_at = ${now},
             error_result = ${JSON.stringify(failure)}::jsonb, error_details = ${JSON.stringify({ errors: [failure] })}::jsonb,
             total_bytes_processed = ${bytes.bytesProcessed}, total_bytes_billed = ${bytes.bytesBilled}, cost_usd = ${formatUsd(cost)}::numeric
       WHERE id = ${jobId}::uuid AND status IN ('PENDING', 'RUNNING')
   RETURNING id, tenant_id, query_id),
    ${ctes}
    SELECT count(*) AS ended FROM ended`;
}

export async function runQueryJob(deps: Deps, jobId: string, context: JobContext): Promise<void> {
  let done: JobResults | undefined;
  try {
    done = await run(deps, jobId, context);
  } finally {
    // Requests waiting for its results take the DONE row, or read it again (ended otherwise, or not: a stopped
    // worker leaves it for a retry).
    deps.queryJobEnds.ended(jobId, done);
  }
}

/** Runs the job; answers what its results pages need once it is DONE (committed). */
async function run(deps: Deps, jobId: string, context: JobContext): Promise<JobResults | undefined> {
  const started = await startJob(deps, jobId);
  if (!started) return;
  const { job, refusal } = started;
  // A retry of a job whose cancel its stopped attempt did not finish: nothing is known of what it processed.
  if (job.cancelRequestedAt) {
    await endWithoutResult(deps, job.id, { status: 'CANCELLED' });
    return;
  }
  if (refusal) {
    await endWithoutResult(deps, job.id, { status: 'FAILED', failure: { reason: 'quotaExceeded', message: refusal.message } });
    return;
  }
  if (!job.projectReachable) {
    await endWithoutResult(deps, job.id, {
      status: 'FAILED',
      failure: { reason: 'accessDenied', message: "The query's project is no longer reachable by your tenant" },
    });
    return;
  }
  const { catalog } = job;
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
    if (error.usage && error.usage.bytesBilled > 0) await endCharged(deps, job.id, ended, error.usage);
    else await end(deps.db, job.id, ended);
    deps.crashPoint('query_job:stopped-recorded');
    return;
  } finally {
    await watch.stop();
  }
  // Killed here, the retry runs the query again: the result table is replaced, and nothing was charged yet.
  deps.crashPoint('query_job:result-stored');
  const [done, firstRows] = await Promise.all([endDone(deps, job.id, outcome), firstRowsForWaiters(deps, job.id, outcome)]);
  if (done === 'access-ended') {
    // The project or a dataset shared into it was taken away while the query ran: its tenant gets no
    // result of it. Charged what it processed, as a query stopped is.
    await endCharged(deps, job.id, { status: 'FAILED', failure: ACCESS_ENDED }, outcome);
    await deps.queryEngine.dropResult(job.id);
    return;
  }
  // Killed here, pg-boss retries a job that is DONE: startJob turns it away, so it is charged once.
  deps.crashPoint('query_job:done');
  return done && firstRows ? { ...done, firstRows } : done;
}

/**
 * The stored result's first page (of the default size), read while the job's end commits, when a
 * request in this process waits for the job (GET .../results?timeout_ms=): handed over with the DONE
 * row, it answers that request's page without a read of its own after the commit. None when no one
 * waits or the result is empty (its page has no rows to read), or when the read fails (the request
 * then reads, and answers its own error).
 */
async function firstRowsForWaiters(
  deps: Deps,
  jobId: string,
  outcome: QueryOutcome,
): Promise<Record<string, unknown>[] | undefined> {
  if (deps.queryJobEnds.waiters(jobId) === 0 || outcome.totalRows === 0) return undefined;
  const limit = Math.min(DEFAULT_RESULT_PAGE_SIZE, outcome.totalRows);
  return deps.queryEngine.readRows(jobId, outcome.columns, { offset: 0, limit }).catch(() => undefined);
}

/**
 * Starts the job, in one statement that commits asynchronously (COMMIT_ASYNCHRONOUSLY): a
 * PENDING job (or a RUNNING one, retried after a stopped attempt) becomes RUNNING, read with its
 * query's project (as it is now: a query may move), whether its tenant still reaches that project,
 * the tables that project reads (its catalog), and its tenant's usage and quota, locked as
 * quotaLeft locks them. None for a job that is gone or
 * has ended. `refusal`: the quota was used up meanwhile (the caller then ends the job FAILED).
 */
async function startJob(deps: Deps, jobId: string) {
  const now = new Date();
  // A prepared statement (every job starts so): values as pg reads them, bigint and numeric as text.
  const [row] = await preparedQuery<
    {
      id: string;
      tenant_id: string;
      project_id: string;
      project_reachable: boolean;
      query_text: string;
      cancel_requested_at: Date | null;
      maximum_bytes_billed: string | null;
      timeout_seconds: number | null;
      tables: ReadableTableRow[];
    } & (UsageText | { [key in keyof UsageText]: null })
  >(
    deps.db.pool,
    Prisma.sql`
    WITH usage AS (
      SELECT u.daily_cost_usd, u.monthly_cost_usd, u.last_reset_daily, u.last_reset_monthly, q.daily_quota_usd, q.monthly_quota_usd
        FROM query_usage u JOIN query_quotas q ON q.tenant_id = u.tenant_id
       WHERE u.tenant_id = (SELECT tenant_id FROM query_jobs WHERE id = ${jobId}::uuid)
         FOR UPDATE OF u),
    started AS (
      UPDATE query_jobs SET status = 'RUNNING', started_at = coalesce(started_at, ${now}::timestamptz), updated_at = ${now}::timestamptz
       WHERE id = ${jobId}::uuid AND status IN ('PENDING', 'RUNNING')
   RETURNING id, tenant_id, query_id, query_text, cancel_requested_at, maximum_bytes_billed, timeout_seconds)
    SELECT s.id::text AS id, s.tenant_id::text AS tenant_id, q.project_id::text AS project_id, s.query_text,
           ${isReachableSql(Prisma.raw('q.project_id'), Prisma.raw('s.tenant_id'))} AS project_reachable,
           s.cancel_requested_at, s.maximum_bytes_billed, s.timeout_seconds, usage.*,
           ${readableTablesSql(Prisma.raw('q.project_id'))} AS tables,
           ${COMMIT_ASYNCHRONOUSLY} AS asynchronous_commit
      FROM started s JOIN queries q ON q.id = s.query_id LEFT JOIN usage ON true`,
  );
  if (!row) return undefined;
  const job: StartedJob = {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    projectReachable: row.project_reachable,
    queryText: row.query_text,
    cancelRequestedAt: row.cancel_requested_at,
    maximumBytesBilled: row.maximum_bytes_billed === null ? null : BigInt(row.maximum_bytes_billed),
    timeoutSeconds: row.timeout_seconds,
    catalog: catalogOfTables(row.tables, row.tenant_id),
  };
  // The usage row is made by the run that queued the job; one missing still is made here.
  const refusal =
    row.daily_cost_usd === null
      ? await pgTransaction(deps.db, (client) => quotaLeft(client, deps.config, job.tenantId, now))
      : quotaLeftOf(usageRowOfText(row), now);
  return { job, refusal };
}

const ACCESS_ENDED = {
  reason: 'accessDenied',
  message: "Your tenant's access to the query's project, or to a dataset shared into it, ended while the query ran",
} as const;

/**
 * Ends a RUNNING job DONE with its outcome and charges it, in one statement that commits
 * asynchronously: charged only if this ends it (a job ended meanwhile stays as it is, uncharged
 * again), and only while its tenant still reaches the query's project and every other tenant's
 * dataset the job read is still shared into it (a share or an invitation ended during the run:
 * `access-ended`, and the job stays RUNNING for the caller to fail). Answers what its results
 * pages need, or none when it had ended.
 */
async function endDone(deps: Deps, jobId: string, outcome: QueryOutcome): Promise<JobResults | 'access-ended' | undefined> {
  const ended = new Date();
  const bytes = { bytesProcessed: BigInt(outcome.bytesProcessed), bytesBilled: BigInt(outcome.bytesBilled) };
  const { cost, ctes } = chargeEnded(deps.config, bytes, ended);
  const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
  // A prepared statement (every job that runs ends so): total_rows comes as text.
  const [row] = await preparedQuery<{
    id: string | null;
    tenant_id: string;
    result_columns: Prisma.JsonValue;
    total_rows: string;
    results_expire_at: Date;
    allowed: boolean;
  }>(
    deps.db.pool,
    Prisma.sql`
    WITH allowed AS (
      SELECT ${isReachableSql(Prisma.raw('q.project_id'), Prisma.raw('j.tenant_id'))}
             AND NOT EXISTS (SELECT 1 FROM query_job_reads r JOIN datasets d ON d.id = r.dataset_id
                              WHERE r.query_job_id = j.id AND NOT ${isDatasetOfProjectSql(Prisma.raw('d'), Prisma.raw('q.project_id'))}) AS ok
        FROM query_jobs j JOIN queries q ON q.id = j.query_id
       WHERE j.id = ${jobId}::uuid),
    ended AS (
      UPDATE query_jobs
         SET status = 'DONE', ended_at = ${ended}::timestamptz, updated_at = ${ended}::timestamptz,
             results_expire_at = ${resultsExpireAt(ended, deps.config.COLLAB_RESULT_TTL_DAYS)}::timestamptz,
             total_rows = ${BigInt(outcome.totalRows)}::bigint, total_slot_ms = ${BigInt(outcome.elapsedMs)}::bigint, cache_hit = ${outcome.cacheHit}::boolean,
             num_dml_affected_rows = ${outcome.numDmlAffectedRows === null ? null : BigInt(outcome.numDmlAffectedRows)}::bigint,
             destination_table = ${json(outcome.destinationTable)}::jsonb, statistics = ${json(outcome.statistics)}::jsonb,
             result_columns = ${json(outcome.columns)}::jsonb,
             private_row_count = ${BigInt(outcome.privateRowCount)}::bigint, suppressed_row_count = ${BigInt(outcome.suppressedRowCount)}::bigint,
             total_bytes_processed = ${bytes.bytesProcessed}::bigint, total_bytes_billed = ${bytes.bytesBilled}::bigint,
             cost_usd = ${formatUsd(cost)}::numeric
       WHERE id = ${jobId}::uuid AND status = 'RUNNING' AND (SELECT ok FROM allowed)
   RETURNING id, tenant_id, query_id, result_columns, total_rows, results_expire_at),
    ${ctes}
    SELECT ended.id::text AS id, ended.tenant_id::text AS tenant_id, ended.result_columns, ended.total_rows, ended.results_expire_at,
           coalesce((SELECT ok FROM allowed), true) AS allowed, ${COMMIT_ASYNCHRONOUSLY} AS asynchronous_commit
      FROM (SELECT 1) AS one LEFT JOIN ended ON true`,
  );
  if (!row || row.id === null) return row?.allowed === false ? 'access-ended' : undefined;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: 'DONE',
    resultColumns: row.result_columns,
    totalRows: BigInt(row.total_rows),
    resultsExpireAt: row.results_expire_at,
  };
}

/** Out of retries (its worker kept stopping): the job fails rather than staying RUNNING. */
export async function queryJobGaveUp(deps: Deps, jobId: string): Promise<void> {
  // One that ended (DONE among them: its result is its own) is left as it is.
  const job = await deps.db.queryJob.findUnique({ where: { id: jobId }, select: { status: true } });
  if (job?.status !== 'PENDING' && job?.status !== 'RUNNING') return;
  await endWithoutResult(deps, jobId, {
    status: 'FAILED',
    failure: { reason: 'backendError', message: 'The job stopped before it finished, and its retries ran out' },
  });
}
