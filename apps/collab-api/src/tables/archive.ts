import { type Actor, liveIn } from '../access/index.js';
import type { Transaction } from '../database.js';

/**
 * Archives the actor's live tables that match `where`, and their jobs (the warehouse is the
 * caller's part). Tables first: archiving a table waits for job creations holding it (see
 * lockLive), so the jobs statement after it sees their jobs.
 */
export async function archiveTables(
  tx: Transaction,
  actor: Actor,
  where: { id: string } | { datasetId: string },
  now = new Date(),
): Promise<void> {
  await tx.table.updateMany({ where: { ...where, ...liveIn(actor) }, data: { archivedAt: now, liveName: null } });
  await tx.tableJob.updateMany({ where: { table: where, ...liveIn(actor) }, data: { archivedAt: now } });
}
