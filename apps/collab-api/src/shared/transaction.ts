import type { Database, Transaction } from '../database.js';
import { quoteIdentifier } from '@repo/db';
import { Prisma } from '../generated/prisma/client.js';

// Warehouse calls run inside: BigQuery's client retries rate limits and 5xx answers for some
// 15 s, and a DDL statement can take seconds; Prisma's default (5 s) would cut them short.
const WAREHOUSE_TRANSACTION = { maxWait: 10_000, timeout: 60_000 };

/**
 * Runs database writes and the warehouse calls that mirror them in one database transaction:
 * `work` writes first and calls the warehouse last, so a warehouse failure (or a refused schema
 * change) rolls the writes back and the two never diverge.
 */
export function withWarehouse<T>(db: Database, work: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.$transaction(work, WAREHOUSE_TRANSACTION);
}

/** Tables whose live rows are parents of other records. */
type ParentTable = 'projects' | 'datasets' | 'tables';

/**
 * How a transaction holds a live parent row until it commits. `share` when adding or moving a
 * child under it; `update` when archiving it with its children. The two exclude each other, so
 * a child is never created under a parent that is being archived, and an archive never misses a
 * child created meanwhile.
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
