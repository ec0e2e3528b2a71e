import { liveIn } from '../access/index.js';
import type { Transaction } from '../database.js';

/**
 * Archives the tenant's live tables that match `where`, and their jobs (the warehouse is the
 * caller's part). Tables first: archiving a table waits for job creations holding it (see
 * lockLive), so the jobs statement after it sees their jobs.
 */
export async function archiveTables(
  tx: Transaction,
  tenant: { tenantId: string },
  where: { id: string } | { datasetId: string },
  now = new Date(),
): Promise<void> {
  await tx.table.updateMany({ where: { ...where, ...liveIn(tenant) }, data: { archivedAt: now, liveName: null } });
  await tx.tableJob.updateMany({ where: { table: where, ...liveIn(tenant) }, data: { archivedAt: now } });
}
