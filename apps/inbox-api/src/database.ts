import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlClient } from '@repo/storage';
import { type Prisma, PrismaClient } from './generated/prisma/client.js';

export type Database = PrismaClient;
/** The client inside `$transaction(async (tx) => ...)`. */
export type Transaction = Prisma.TransactionClient;

export function createDatabaseClient(url: string, poolSize: number): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}

/** The client as the `database` storage backend queries it: objects go through the app's own pool. */
export function sqlClientOf(db: Database): SqlClient {
  return { query: async (text, values) => ({ rows: await db.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values) }) };
}
