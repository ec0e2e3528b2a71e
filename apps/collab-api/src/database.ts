import { PrismaPg } from '@prisma/adapter-pg';
import { type Prisma, PrismaClient } from './generated/prisma/client.js';

export type Database = PrismaClient;

/** The client inside an interactive transaction; services that only query take either. */
export type Transaction = Prisma.TransactionClient;

export function createDatabaseClient(url: string, poolSize: number): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}

/**
 * Makes `tx` commit asynchronously (Postgres' synchronous_commit off, for this transaction only):
 * its commit no longer waits for the disk, which is most of a short transaction's time. A crash
 * of the database server (not of this process) may then lose the last fraction of a second of
 * such commits, never corrupt them; so only for writes that are made again when lost: a query
 * job's start, and its end with its charge (lost together, the job is run and charged again).
 */
export async function commitAsynchronously(tx: Transaction): Promise<void> {
  await tx.$executeRaw`SET LOCAL synchronous_commit = off`;
}
