import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { redactUrl } from '@repo/config';

/**
 * Applies migrations kept in Prisma's folder layout (`<dir>/<timestamp>_<name>/migration.sql`)
 * and records them in Prisma's `_prisma_migrations` table with Prisma's checksums, so a
 * database migrated here is one that `prisma migrate deploy` also considers up to date.
 * Runs in-process and needs no schema engine, which is unavailable offline.
 */

export interface Migration {
  name: string;
  sql: string;
  /** sha256 of migration.sql, hex: what Prisma stores in `checksum`. */
  checksum: string;
}

export interface MigrationLogger {
  info(fields: object, message: string): void;
}

// The advisory lock key Prisma's schema engine takes, so we also exclude a concurrent `prisma migrate`.
const PRISMA_MIGRATE_LOCK = 72707369;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/**
 * Applies the pending migrations in name order, each in its own transaction together with
 * its `_prisma_migrations` row: a migration is either applied and recorded, or neither.
 * Returns the names applied.
 */
export async function applyMigrations(
  client: pg.ClientBase,
  migrations: Migration[],
  logger?: MigrationLogger,
): Promise<string[]> {
  await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
  try {
    await client.query(CREATE_MIGRATIONS_TABLE);
    const { rows } = await client.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const pending = pendingMigrations(migrations, rows);
    for (const migration of pending) {
      await applyOne(client, migration);
      logger?.info({ migration: migration.name }, 'applied migration');
    }
    return pending.map((migration) => migration.name);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]);
  }
}

/** The migrations still to apply; refuses to go on when the history and the files disagree. */
export function pendingMigrations(migrations: Migration[], applied: AppliedRow[]): Migration[] {
  const unfinished = applied.find((row) => row.finished_at === null);
  if (unfinished) {
    throw new MigrationError(
      `Migration ${unfinished.migration_name} was started but never finished. Check the database, then mark it ` +
        `with \`prisma migrate resolve --applied|--rolled-back ${unfinished.migration_name}\` before migrating again.`,
    );
  }
  const appliedByName = new Map(applied.map((row) => [row.migration_name, row]));
  for (const migration of migrations) {
    const row = appliedByName.get(migration.name);
    if (row && row.checksum !== migration.checksum) {
      throw new MigrationError(
        `Migration ${migration.name} was changed after it was applied to this database. ` +
          'Restore its original migration.sql and put the change in a new migration.',
      );
    }
  }
  return migrations.filter((migration) => !appliedByName.has(migration.name));
}

async function applyOne(client: pg.ClientBase, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Migrates the database at `url`, creating it first when `createDatabase` is set and it is missing. */
export async function migrateDatabase(
  url: string,
  migrationsDir: string,
  options: { createDatabase?: boolean; logger?: MigrationLogger } = {},
): Promise<string[]> {
  if (options.createDatabase) await ensureDatabase(url);
  const migrations = await readMigrations(migrationsDir);
  return withClient(url, (client) => applyMigrations(client, migrations, options.logger));
}

/** Runs `work` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the database named in `url` when it does not exist (connecting to `postgres` to do so). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new MigrationError(`DATABASE_URL names no database: ${redactUrl(url)}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), async (client) => {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return;
    await client.query(`CREATE DATABASE ${quoteIdentifier(name)}`).catch((error: { code?: string }) => {
      // Another replica created it in the meantime.
      if (error.code !== '42P04') throw error;
    });
  });
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
