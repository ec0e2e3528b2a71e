import { PrismaPg } from '@prisma/adapter-pg';
import { createPool, type PoolOptions, preparedQuery } from '@repo/db';
import type { SqlClient } from '@repo/storage';
import type pg from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client.js';

/**
 * The app's Prisma client, and the pg pool under it. The statements that carry whole message
 * bodies or attachment bytes run on the pool directly: Prisma's raw queries pass their parameters
 * through JSON.stringify and JSON.parse on the event loop (50 to 90 ms for a 1 MB HTML body on
 * these machines), pg sends them as they are.
 */
export interface Database extends PrismaClient {
  readonly pool: pg.Pool;
}
/** The client inside `$transaction(async (tx) => ...)`. */
export type Transaction = Prisma.TransactionClient;

export function createDatabaseClient(url: string, poolSize: number, options: PoolOptions = {}): Database {
  const pool = createPool(url, poolSize, options);
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return Object.assign(client, { pool });
}

/** Runs statements built with `Prisma.sql`, on Prisma (a client or its transaction) or on pg directly. */
export interface Statements {
  query<T>(statement: Prisma.Sql): Promise<T[]>;
  /** The statements run in one transaction (a Prisma transaction's, or pgTransaction's client); otherwise each commits alone. */
  readonly transactional: boolean;
}

/** The statements of a Prisma transaction (`$transaction(async (tx) => ...)`). */
export function prismaStatements(tx: Transaction): Statements {
  return { query: (statement) => tx.$queryRaw(statement), transactional: true };
}

/** A pool's client is checked out by pgTransaction only (@repo/db): its statements are a transaction's. */
const isPoolClient = (client: pg.Pool | pg.PoolClient): client is pg.PoolClient => 'release' in client;

export function pgStatements(client: pg.Pool | pg.PoolClient): Statements {
  return {
    query: async <T>(statement: Prisma.Sql) => (await client.query(statement.text, statement.values)).rows as T[],
    transactional: isPoolClient(client),
  };
}

/**
 * pgStatements as prepared statements (@repo/db's preparedQuery): Postgres parses and plans the
 * inbound path's large statements in more time than it runs them (bench:ingest).
 */
export function preparedStatements(client: pg.Pool | pg.PoolClient): Statements {
  return { query: (statement) => preparedQuery(client, statement), transactional: isPoolClient(client) };
}

/**
 * `values` as a set of text rows (`FROM textRows(...) AS value`, `IN (SELECT textRows(...))`),
 * sent as one JSON parameter: pg escapes an array parameter element by element in JavaScript,
 * some 10 ms of the event loop for the 10,000 storage keys of one mail; JSON.stringify is native.
 */
export function textRows(values: readonly string[]): Prisma.Sql {
  return Prisma.sql`json_array_elements_text(${JSON.stringify(values)}::json)`;
}

/** Longest list sizedTextArray spells out; a longer one (a hostile mail's recipients) is one parameter. */
const SIZED_ARRAY_MAX = 64;

/**
 * `values` as `ARRAY[$1::text, $2::text, ...]`, padded with NULLs to a power of two: for a prepared
 * statement whose plan depends on how many there are. Postgres guesses 10 elements for an array
 * parameter, so that such a statement's generic plan looks ten times dearer than the plans made for
 * its values, and it plans the statement again on every run; given the length, it keeps the generic
 * plan. Padded, a statement has a text per power of two (a NULL matches nothing in `=` or `ANY`).
 * Past SIZED_ARRAY_MAX values, one array parameter: planned each run, but never past Postgres's
 * 65,535 parameters of a statement, nor a prepared text per size of such lists on every connection.
 */
export function sizedTextArray(values: readonly string[]): Prisma.Sql {
  if (values.length > SIZED_ARRAY_MAX) return Prisma.sql`${values}::text[]`;
  const size = 2 ** Math.ceil(Math.log2(Math.max(values.length, 1)));
  const padded = [...values, ...Array.from({ length: size - values.length }, () => null)];
  return Prisma.sql`ARRAY[${Prisma.join(padded.map((value) => Prisma.sql`${value}::text`))}]`;
}

/** The client as the `database` storage backend queries it: objects go through the app's own pool, bytes as they are. */
export function sqlClientOf(db: Database): SqlClient {
  return { query: async (text, values) => ({ rows: (await db.pool.query(text, values)).rows as Record<string, unknown>[] }) };
}
