import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { applyMigrations, quoteIdentifier, readMigrations, withClient } from '../migrations.js';

/** The server tests create their databases on; any database on it works as the admin connection. */
export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

const PREFIX = 'scratch_';

let staleSwept: Promise<unknown> | undefined;

/**
 * A unique database name on the test server, not created yet: for code under test that creates
 * its database itself. Names carry their creation time, so the first call of a process also
 * drops what runs that were killed left behind.
 */
export async function reserveScratchDatabase(label: string): Promise<ScratchDatabase> {
  // Another test process may sweep the same names at the same moment; losing that race is harmless.
  staleSwept ??= dropStaleDatabases().catch(() => []);
  await staleSwept;
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 20);
  const name = `${PREFIX}${safeLabel}_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  return {
    url: databaseUrl(name),
    name,
    drop: () =>
      withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A new, empty database with a unique name, migrated when `migrationsDir` is given. */
export async function createScratchDatabase(options: { label: string; migrationsDir?: string }): Promise<ScratchDatabase> {
  const database = await reserveScratchDatabase(options.label);
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${quoteIdentifier(database.name)}`));
  if (options.migrationsDir) {
    const migrations = await readMigrations(options.migrationsDir);
    await withClient(database.url, (client) => applyMigrations(client, migrations));
  }
  return database;
}

/** Drops scratch databases left behind by runs older than `maxAgeSeconds`. */
export async function dropStaleDatabases(maxAgeSeconds = 3600): Promise<string[]> {
  return withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${PREFIX}%`,
    ]);
    const cutoff = Date.now() / 1000 - maxAgeSeconds;
    const stale = rows
      .map((row) => row.datname)
      .filter((name) => {
        const created = Number(/_(\d{10})_[0-9a-f]{8}$/.exec(name)?.[1]);
        return Number.isFinite(created) && created < cutoff;
      });
    for (const name of stale) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
    return stale;
  });
}

function databaseUrl(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  return withClient(adminDatabaseUrl(), work);
}
