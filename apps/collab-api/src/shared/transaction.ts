import type { Database, Transaction } from '../database.js';

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
