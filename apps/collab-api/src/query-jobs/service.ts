import { pgTransaction, preparedQuery, uuidv7 } from '@repo/db';
import { ConflictError, GoneError, NotFoundError, ValidationError } from '@repo/errors';
import { type Actor, requireMayCancelQueryJob } from '../access/index.js';
import type { AppliedRule } from '../access-log/schemas.js';
import type { ResultColumn } from '../adapters/warehouse/query/index.js';
import { isReachableSql } from '../associations/access.js';
import { type Database, type Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import { toQueryExportResponse } from '../exports/service.js';
import { Prisma, type Query, type QueryExport, type QueryJob } from '../generated/prisma/client.js';
import { findQuery } from '../queries/service.js';
import { requireQuotaLeft } from '../quota/service.js';
import { iso, isoOrNull, type ListOptions } from '../shared/schemas.js';
import { nextRoundSql, queuePriority } from './scheduling.js';
import type { QueryJobResponse, ResultPageResponse, RunQueryInput } from './schemas.js';
import { cancelEffect, CANCELLED_BY_REQUEST, hasEnded, pageBounds, resultsGone, resultsUnavailable } from './states.js';

export type QueryJobDeps = Pick<Deps, 'db' | 'queue' | 'config' | 'queryEngine' | 'now' | 'queryJobEnds'>;

const STATISTICS = [
  'dml_stats',
  'query_plan',
  'timeline',
  'script_statistics',
  'session_info',
  'transaction_info',
  'reservation_usage',
] as const;

const toNumber = (value: bigint | null) => (value === null ? null : Number(value));

export function toQueryJobResponse(job: QueryJob & { exports: QueryExport[] }): QueryJobResponse {
  const statistics = (job.statistics ?? {}) as Record<string, Record<string, unknown> | undefined>;
  return {
    id: job.id,
    tenant_id: job.tenantId,
    query_id: job.queryId,
    running_job_id: job.startedAt ? job.id : null,
    status: job.status,
    error_result: job.errorResult as Record<string, unknown> | null,
    error_details: job.errorDetails as Record<string, unknown> | null,
    created: iso(job.createdAt),
    started: isoOrNull(job.startedAt),
    ended: isoOrNull(job.endedAt),
    total_rows: toNumber(job.totalRows),
    total_bytes_processed: toNumber(job.totalBytesProcessed),
    total_bytes_billed: toNumber(job.totalBytesBilled),
    total_slot_ms: toNumber(job.totalSlotMs),
    cache_hit: job.cacheHit,
    ...(Object.fromEntries(STATISTICS.map((name) => [name, statistics[name] ?? null])) as Record<
      (typeof STATISTICS)[number],
      null
    >),
    destination_table: job.destinationTable as Record<string, unknown> | null,
    num_dml_affected_rows: toNumber(job.numDmlAffectedRows),
    created_at: iso(job.createdAt),
    updated_at: iso(job.updatedAt),
    private_row_count: toNumber(job.privateRowCount),
    suppressed_row_count: toNumber(job.suppressedRowCount),
    applied_rules: (job.appliedRules ?? []) as unknown as AppliedRule[],
    maximum_bytes_billed: job.maximumBytesBilled === null ? null : String(job.maximumBytesBilled),
    timeout_seconds: job.timeoutSeconds,
    results_expire_at: isoOrNull(job.resultsExpireAt),
    exports: job.exports.map(toQueryExportResponse),
  };
}

const withExports = { exports: { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }] } };

/** A job of the actor's tenant; 404 otherwise. */
export async function findQueryJob(db: Database | Transaction, actor: Pick<Actor, 'tenantId'>, jobId: string) {
  const job = await db.queryJob.findFirst({ where: { id: jobId, tenantId: actor.tenantId }, include: withExports });
  if (!job) throw new NotFoundError('Query job not found');
  return job;
}

/** What a run takes of its saved query. */
export type QueryToRun = Pick<Query, 'id' | 'projectId' | 'queryText'>;

/** The saved query a run names (404 otherwise), with that text (409 otherwise), in a project still reachable (404 otherwise). */
export async function savedQueryToRun(
  db: Database,
  actor: Actor,
  input: { query_id: string; query_text: string },
): Promise<QueryToRun> {
  // One prepared statement: the tenant's live query, and whether its project is reachable.
  const [row] = await preparedQuery<{ id: string; project_id: string; query_text: string; project_reachable: boolean }>(
    db.pool,
    Prisma.sql`
      SELECT q.id, q.project_id, q.query_text, ${isReachableSql(Prisma.raw('q.project_id'), Prisma.raw('q.tenant_id'))} AS project_reachable
        FROM queries q
       WHERE q.id = ${input.query_id}::uuid AND q.tenant_id = ${actor.tenantId}::uuid AND q.archived_at IS NULL`,
  );
  if (!row) throw new NotFoundError('Query not found');
  if (row.query_text !== input.query_text) {
    throw new ConflictError(
      "query_text differs from the saved query's text: save it first (PATCH /api/v1/queries/{query_id}), then run it",
    );
  }
  if (!row.project_reachable) throw new NotFoundError('Project not found');
  return { id: row.id, projectId: row.project_id, queryText: row.query_text };
}

/** A DONE job of the actor's tenant whose stored result is still kept: 409 before DONE, 410 once it expired. */
export async function findJobWithResults(
  db: Database | Transaction,
  actor: Pick<Actor, 'tenantId'>,
  jobId: string,
  now: Date,
): Promise<QueryJob> {
  return withResults(await findBareQueryJob(db, actor, jobId), now);
}

/** A job of the actor's tenant without its exports (404 otherwise): one statement, for results and exports. */
async function findBareQueryJob(db: Database | Transaction, actor: Pick<Actor, 'tenantId'>, jobId: string): Promise<QueryJob> {
  const job = await db.queryJob.findFirst({ where: { id: jobId, tenantId: actor.tenantId } });
  if (!job) throw new NotFoundError('Query job not found');
  return job;
}

/**
 * What a results page needs of its job: a worker that ends a job DONE hands this over to waiting
 * requests, with the stored result's first rows (`firstRows`, from row 0) when it read them for them.
 */
export type JobResults = Pick<QueryJob, 'id' | 'tenantId' | 'status' | 'resultColumns' | 'totalRows' | 'resultsExpireAt'> & {
  firstRows?: Record<string, unknown>[];
};

/** What a results page needs of a job of the actor's tenant (404 otherwise): one prepared statement, read by every page. */
async function findJobResults(db: Database, actor: Pick<Actor, 'tenantId'>, jobId: string): Promise<JobResults> {
  const [row] = await preparedQuery<{
    id: string;
    tenant_id: string;
    status: QueryJob['status'];
    result_columns: QueryJob['resultColumns'];
    total_rows: string | null;
    results_expire_at: Date | null;
  }>(
    db.pool,
    Prisma.sql`
      SELECT id, tenant_id, status, result_columns, total_rows, results_expire_at
        FROM query_jobs WHERE id = ${jobId}::uuid AND tenant_id = ${actor.tenantId}::uuid`,
  );
  if (!row) throw new NotFoundError('Query job not found');
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: row.status,
    resultColumns: row.result_columns,
    totalRows: row.total_rows === null ? null : BigInt(row.total_rows),
    resultsExpireAt: row.results_expire_at,
  };
}

/** The job, when it has results to read: 409 before DONE, 410 once they expired. */
function withResults<T extends Pick<QueryJob, 'status' | 'resultsExpireAt'>>(job: T, now: Date): T {
  const unavailable = resultsUnavailable(job.status);
  if (unavailable) throw new ConflictError(unavailable);
  const gone = resultsGone(job.resultsExpireAt, now);
  if (gone) throw new GoneError(gone);
  return job;
}

/**
 * A run's own time limit past the service's: invalid input like any other out-of-range value (422,
 * the same shape), though the bound is a setting; a dry run refuses it as the run would.
 */
export function checkTimeout(
  config: Pick<Deps['config'], 'COLLAB_QUERY_TIMEOUT_SECONDS'>,
  timeoutSeconds: number | undefined,
): void {
  const limit = config.COLLAB_QUERY_TIMEOUT_SECONDS;
  if (timeoutSeconds !== undefined && timeoutSeconds > limit) {
    throw new ValidationError([
      {
        loc: ['body', 'timeout_seconds'],
        msg: `timeout_seconds may be at most ${limit}, this service's limit (COLLAB_QUERY_TIMEOUT_SECONDS)`,
        type: 'less_than_equal',
      },
    ]);
  }
}

/**
 * Queues a run of a saved query: the text must be the saved one, the project still reachable and
 * the tenant's quota not used up (checked under the tenant's usage lock). The job and its queue
 * entry commit together; the entry takes its turn between tenants (scheduling.ts).
 */
export async function runQuery(deps: QueryJobDeps, actor: Actor, input: RunQueryInput): Promise<{ job_id: string }> {
  checkTimeout(deps.config, input.timeout_seconds);
  const query = await savedQueryToRun(deps.db, actor, input);
  // On one connection, each statement prepared (pg-boss's insert apart): a fraction of an ORM transaction's event-loop time.
  const jobId = await pgTransaction(deps.db, async (client) => {
    await requireQuotaLeft(client, deps.config, actor.tenantId);
    const now = new Date();
    // Its round is taken in the insert (one statement fewer), read after the usage lock as scheduling.ts requires.
    const [job] = await preparedQuery<{ id: string; queue_round: number }>(
      client,
      Prisma.sql`
      INSERT INTO query_jobs (id, tenant_id, query_id, created_by_id, created_by_email, tenant_name, status, query_text,
                              queue_round, maximum_bytes_billed, timeout_seconds, created_at, updated_at)
      SELECT ${uuidv7()}::uuid, ${actor.tenantId}::uuid, ${query.id}::uuid, ${actor.userId}::uuid,
             (SELECT email FROM users WHERE id = ${actor.userId}::uuid AND tenant_id = ${actor.tenantId}::uuid),
             (SELECT name FROM tenants WHERE id = ${actor.tenantId}::uuid), 'PENDING', ${query.queryText}::text,
             ${nextRoundSql(actor.tenantId)}, ${input.maximum_bytes_billed ?? null}::bigint, ${input.timeout_seconds ?? null}::int,
             ${now}::timestamptz, ${now}::timestamptz
      RETURNING id::text AS id, queue_round`,
    );
    const { id, queue_round: round } = job!;
    await deps.queue.send(
      'query-job',
      { query_job_id: id },
      { tx: client, group: actor.tenantId, priority: queuePriority(round) },
    );
    return id;
  });
  deps.queue.wake('query-job');
  return { job_id: jobId };
}

/**
 * Cancels a job of the actor's tenant (404 otherwise), for the user who ran it or an Org admin
 * (403 for others): a PENDING job is CANCELLED at once and never runs; a RUNNING one is asked to
 * stop, which the worker running it (in whichever process) does within a second, ending it
 * CANCELLED; a CANCELLED one is answered again as it is; an ended one is a 409.
 */
export async function cancelQueryJob(db: Database, actor: Actor, jobId: string): Promise<QueryJobResponse> {
  const job = await findQueryJob(db, actor, jobId);
  requireMayCancelQueryJob(actor, job);
  const effect = cancelEffect(job.status);
  if (typeof effect === 'object') throw new ConflictError(effect.conflict);
  if (effect === 'cancel') {
    await db.queryJob.updateMany({
      where: { id: job.id, status: 'PENDING' },
      data: {
        status: 'CANCELLED',
        endedAt: new Date(),
        errorResult: CANCELLED_BY_REQUEST,
        errorDetails: { errors: [CANCELLED_BY_REQUEST] },
      },
    });
  } else if (effect === 'ask-worker') {
    await db.queryJob.updateMany({
      where: { id: job.id, status: 'RUNNING', cancelRequestedAt: null },
      data: { cancelRequestedAt: new Date() },
    });
  }
  const after = await findQueryJob(db, actor, jobId);
  // Started (or ended) meanwhile: that state decides.
  if (effect === 'cancel' && after.status !== 'CANCELLED') return cancelQueryJob(db, actor, jobId);
  return toQueryJobResponse(after);
}

export async function getQueryJob(db: Database, actor: Actor, jobId: string): Promise<QueryJobResponse> {
  return toQueryJobResponse(await findQueryJob(db, actor, jobId));
}

/** The tenant's jobs, or one query's (404 for a query that is not the tenant's), newest first. */
export async function listQueryJobs(
  db: Database,
  actor: Actor,
  filter: { queryId?: string },
  page: ListOptions,
): Promise<{ query_jobs: QueryJobResponse[] }> {
  if (filter.queryId) await findQuery(db, actor, filter.queryId);
  const jobs = await db.queryJob.findMany({
    where: { tenantId: actor.tenantId, ...(filter.queryId ? { queryId: filter.queryId } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: page.skip,
    take: page.limit,
    include: withExports,
  });
  return { query_jobs: jobs.map(toQueryJobResponse) };
}

/**
 * A page of a DONE job's stored result (409 before, 410 once expired); the query does not run
 * again. With `timeout_ms`, a job that has not ended is waited for that long at most.
 */
export async function resultPage(
  deps: Pick<QueryJobDeps, 'db' | 'queryEngine' | 'now' | 'queryJobEnds'>,
  actor: Actor,
  jobId: string,
  page: { page: number; page_size: number; timeout_ms: number },
): Promise<ResultPageResponse> {
  const read = () => findJobResults(deps.db, actor, jobId);
  // What this process's worker wrote when it ended the job DONE, if it is this job of this tenant (one read fewer).
  const handed = (row: unknown) => {
    const job = row as JobResults;
    return job.id === jobId && job.tenantId === actor.tenantId ? job : undefined;
  };
  const found = await deps.queryJobEnds.until(jobId, page.timeout_ms, read, (job) => hasEnded(job.status), handed);
  const job = withResults(found, deps.now());
  const columns = job.resultColumns as unknown as ResultColumn[];
  const totalRows = Number(job.totalRows);
  const bounds = pageBounds(totalRows, page.page, page.page_size);
  // A page within the rows the worker handed over is not read again.
  const handedRows = bounds.offset + bounds.limit <= (job.firstRows?.length ?? 0) ? job.firstRows : undefined;
  const rows =
    bounds.limit === 0
      ? []
      : (handedRows?.slice(bounds.offset, bounds.offset + bounds.limit) ??
        (await deps.queryEngine.readRows(job.id, columns, bounds)));
  return {
    rows: rows.map((data) => ({ data })),
    columns: columns.map((column) => column.name),
    schema: deps.queryEngine.resultSchema(columns),
    column_privacy: Object.fromEntries(columns.map((column) => [column.name, column.private ? 'private' : 'public'])),
    total_rows: totalRows,
    page: page.page,
    page_size: page.page_size,
    total_pages: bounds.totalPages,
  };
}
