import { PrismaPg } from '@prisma/adapter-pg';
import { type Prisma, PrismaClient } from './generated/prisma/client.js';

export type Database = PrismaClient;

/** The client inside an interactive transaction; services that only query take either. */
export type Transaction = Prisma.TransactionClient;

export function createDatabaseClient(url: string, poolSize: number): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}
