import type { Transaction } from '../database.js';
import { quoteIdentifier } from '@repo/db';
import { Prisma } from '../generated/prisma/client.js';

/** Tables whose live rows are parents of other records, or are changed under lock. */
type ParentTable = 'projects' | 'datasets' | 'tables' | 'agents';

/**
 * How a transaction holds a live row until it commits. `share` when adding or moving a child
 * under it; `update` when changing the row itself or archiving it with its children. The two
 * exclude each other, so a child is never created under a parent that is being archived, an
 * archive never misses a child created meanwhile, and an update reads the row it changes as no
 * other update can change it.
 */
export type ParentLock = 'share' | 'update';

const LOCK_CLAUSE: Record<ParentLock, Prisma.Sql> = { share: Prisma.sql`FOR SHARE`, update: Prisma.sql`FOR UPDATE` };

/**
 * Locks the live row `id` of the actor's tenant in `table`, if there is one; a row archived by a
 * transaction that committed while this one waited no longer matches. Callers read the row
 * afterwards (and answer 404 when it is gone).
 */
export async function lockLive(
  tx: Transaction,
  table: ParentTable,
  actor: { tenantId: string },
  id: string,
  lock: ParentLock,
): Promise<void> {
  await tx.$queryRaw`SELECT 1 FROM ${Prisma.raw(quoteIdentifier(table))}
    WHERE id = ${id}::uuid AND tenant_id = ${actor.tenantId}::uuid AND archived_at IS NULL
    ${LOCK_CLAUSE[lock]}`;
}
