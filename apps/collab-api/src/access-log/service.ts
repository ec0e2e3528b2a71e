import type { Actor } from '../access/index.js';
import type { Database } from '../database.js';
import { findDataset } from '../datasets/service.js';
import { iso, isoOrNull } from '../shared/schemas.js';
import type { AccessLogEntry, AppliedRule } from './schemas.js';

const toNumber = (value: bigint | null) => (value === null ? null : Number(value));

/**
 * Other tenants' jobs that read a dataset of the actor's tenant (404 otherwise), newest first: who
 * ran what (the user's e-mail and the tenant's name as they were then), what it returned, the rules
 * of this dataset it applied and the exports made of it.
 * Written by the worker alone (src/access-log/record.ts), so no tenant edits or deletes it.
 */
export async function accessLog(
  db: Database,
  actor: Actor,
  datasetId: string,
  page: { page: number; page_size: number },
): Promise<{ items: AccessLogEntry[]; total: number; page: number; page_size: number }> {
  const dataset = await findDataset(db, actor, datasetId);
  const where = { reads: { some: { datasetId: dataset.id } } };
  const [jobs, total] = await Promise.all([
    db.queryJob.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (page.page - 1) * page.page_size,
      take: page.page_size,
      include: {
        exports: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      },
    }),
    db.queryJob.count({ where }),
  ]);
  return {
    items: jobs.map((job) => ({
      job_id: job.id,
      query_id: job.queryId,
      tenant_id: job.tenantId,
      tenant_name: job.tenantName,
      user_email: job.createdByEmail,
      query_text: job.queryText,
      status: job.status,
      total_rows: toNumber(job.totalRows),
      suppressed_row_count: toNumber(job.suppressedRowCount),
      total_bytes_processed: toNumber(job.totalBytesProcessed),
      created_at: iso(job.createdAt),
      applied_rules: ((job.appliedRules ?? []) as unknown as AppliedRule[]).filter((rule) => rule.dataset_id === dataset.id),
      exports: job.exports.map((row) => ({
        id: row.id,
        status: row.status,
        format: row.format,
        compression: row.compression,
        created_at: iso(row.createdAt),
        completed_at: isoOrNull(row.completedAt),
      })),
    })),
    total,
    page: page.page,
    page_size: page.page_size,
  };
}
