import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import type { Database } from '../database.js';
import type { TableJob, TableJobKind } from '../generated/prisma/client.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { findTable } from '../tables/service.js';
import { inTurn, requireNoChangeUnderWay } from '../warehouse-changes/index.js';
import type { JobResponse } from './schemas.js';

function toJobResponse(job: TableJob): JobResponse {
  return {
    id: job.id,
    tenant_id: job.tenantId,
    table_id: job.tableId,
    status: job.status,
    created_at: iso(job.createdAt),
    archived_at: isoOrNull(job.archivedAt),
  };
}

/**
 * Records a job for a live table of the actor's tenant (404 otherwise), once the warehouse
 * changes of the table under way have ended: a job never goes to a table being deleted.
 */
export async function createJob(
  db: Database,
  actor: Actor,
  kind: TableJobKind,
  input: { status: string; table_id: string },
): Promise<JobResponse> {
  return inTurn(db, 'A change of this table', async (tx) => {
    const table = await findTable(tx, actor, input.table_id, 'share');
    await requireNoChangeUnderWay(tx, { relyingOn: [table.id] });
    return toJobResponse(
      await tx.tableJob.create({ data: { tenantId: actor.tenantId, tableId: table.id, kind, status: input.status } }),
    );
  });
}

export async function listJobs(db: Database, actor: Actor, kind: TableJobKind, page: ListOptions): Promise<JobResponse[]> {
  return (await db.tableJob.findMany({ where: { kind, ...liveIn(actor) }, ...oldestFirst(page) })).map(toJobResponse);
}

export async function listTableJobs(
  db: Database,
  actor: Actor,
  kind: TableJobKind,
  tableId: string,
  page: ListOptions,
): Promise<JobResponse[]> {
  const table = await findTable(db, actor, tableId);
  return (await db.tableJob.findMany({ where: { kind, tableId: table.id, ...liveIn(actor) }, ...oldestFirst(page) })).map(
    toJobResponse,
  );
}

export async function getJob(db: Database, actor: Actor, kind: TableJobKind, jobId: string): Promise<JobResponse> {
  const job = await db.tableJob.findFirst({ where: { id: jobId, kind, ...liveIn(actor) } });
  if (!job) throw new NotFoundError('Job not found');
  return toJobResponse(job);
}
