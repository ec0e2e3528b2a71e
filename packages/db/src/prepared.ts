import { createHash } from 'node:crypto';

/** A statement's text and its parameters, as `Prisma.sql` builds them. */
export interface SqlStatement {
  readonly text: string;
  readonly values: unknown[];
}

/** What runs a prepared statement: a pg pool, or one of its clients. */
export interface PreparingClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Runs `statement` as a prepared statement: each connection prepares it once, under a name drawn
 * from its text, and then only binds and runs it (Postgres parses and plans a statement in about as
 * much time as it runs a short one). Only for statements of a few fixed texts, every value a
 * parameter: each text stays prepared on each connection for its lifetime. Rows come as pg reads
 * them: bigint and numeric columns as strings, json parsed.
 */
export async function preparedQuery<T>(client: PreparingClient, { text, values }: SqlStatement): Promise<T[]> {
  return (await client.query({ name: statementName(text), text, values })).rows as T[];
}

/** The names of the texts prepared so far: hashing a text of kilobytes on each run cost more than the look-up. */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = createHash('sha1').update(text).digest('base64url');
    statementNames.set(text, name);
  }
  return name;
}
