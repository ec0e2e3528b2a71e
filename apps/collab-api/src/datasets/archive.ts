import type { Transaction } from '../database.js';
import { archiveTables } from '../tables/archive.js';

/** Archives the dataset with its tables (and their jobs), freeing their names; the warehouse is the caller's part. */
export async function archiveDatasetWithTables(tx: Transaction, tenant: { tenantId: string }, datasetId: string): Promise<void> {
  const now = new Date();
  await archiveTables(tx, tenant, { datasetId }, now);
  await tx.dataset.updateMany({ where: { id: datasetId, archivedAt: null }, data: { archivedAt: now, liveName: null } });
}
