import { PrismaPg } from '@prisma/adapter-pg';
import { createPool, type PoolOptions } from '@repo/db';
import type pg from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client.js';

/**
 * The app's Prisma client, and the pg pool under it: the statements every request or job runs
 * go to the pool directly as prepared statements (@repo/db's preparedQuery), at less than half of
 * what a Prisma query costs the event loop.
 */
export interface Database extends PrismaClient {
  readonly pool: pg.Pool;
}

/** The client inside an interactive transaction; services that only query take either. */
export type Transaction = Prisma.TransactionClient;

export function createDatabaseClient(url: string, poolSize: number, options: PoolOptions = {}): Database {
  const pool = createPool(url, poolSize, options);
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return Object.assign(client, { pool });
}

/**
 * A select-list item that makes the statement's transaction commit asynchronously (Postgres'
 * synchronous_commit off, for that transaction only; `SET LOCAL` as a function, so that a single
 * statement carries it): its commit no longer waits for the disk, which is most of a short
 * transaction's time. A crash of the database server (not of this process) may then lose the last
 * fraction of a second of such commits, never corrupt them; so only for writes that are made again
 * when lost: a query job's start, and its end with its charge (lost together, the job is run and
 * charged again).
 */
export const COMMIT_ASYNCHRONOUSLY = Prisma.sql`set_config('synchronous_commit', 'off', true)`;
