import { createHash, randomBytes } from 'node:crypto';
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

/**
 * A new database with a unique name: empty, or migrated when `migrationsDir` is given. A migrated
 * one is a copy of a template database that the migrations were applied to once (per set of
 * migrations, renewed every half hour): a copy takes as long as creating an empty database,
 * where applying the migrations to each test file's database took a second or more.
 */
export async function createScratchDatabase(options: { label: string; migrationsDir?: string }): Promise<ScratchDatabase> {
  const database = await reserveScratchDatabase(options.label);
  const template = options.migrationsDir ? await migratedTemplate(options.migrationsDir) : undefined;
  await withAdmin((admin) =>
    admin.query(`CREATE DATABASE ${quoteIdentifier(database.name)}${template ? ` TEMPLATE ${quoteIdentifier(template)}` : ''}`),
  );
  return database;
}

// Younger than the stale sweep's hour by far: a template found is copied long before a sweep may drop it.
const TEMPLATE_MAX_AGE_SECONDS = 1800;

/**
 * The name of a database migrated with exactly the migrations in `migrationsDir`, created when
 * none is young enough. It is migrated under a name of its own and renamed when done, so a
 * template found is always complete (also when its maker was killed halfway). Template names
 * carry their creation time like every scratch name: the stale sweep drops them.
 */
async function migratedTemplate(migrationsDir: string): Promise<string> {
  const migrations = await readMigrations(migrationsDir);
  const digest = createHash('sha256');
  for (const migration of migrations) digest.update(`${migration.name}\n${migration.checksum}\n`);
  const key = digest.digest('hex').slice(0, 12);
  const found = await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${PREFIX}tpl_${key}_%`,
    ]);
    const cutoff = Date.now() / 1000 - TEMPLATE_MAX_AGE_SECONDS;
    return rows.map((row) => row.datname).find((name) => createdAt(name) > cutoff);
  });
  if (found) return found;
  const building = await reserveScratchDatabase(`build_${key}`);
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${quoteIdentifier(building.name)}`));
  try {
    await withClient(building.url, (client) => applyMigrations(client, migrations));
  } catch (error) {
    await building.drop();
    throw error;
  }
  const template = building.name.replace(`${PREFIX}build_`, `${PREFIX}tpl_`);
  await withAdmin((admin) =>
    admin.query(`ALTER DATABASE ${quoteIdentifier(building.name)} RENAME TO ${quoteIdentifier(template)}`),
  );
  return template;
}

/** Drops scratch databases left behind by runs older than `maxAgeSeconds`. */
export async function dropStaleDatabases(maxAgeSeconds = 3600): Promise<string[]> {
  return withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${PREFIX}%`,
    ]);
    const cutoff = Date.now() / 1000 - maxAgeSeconds;
    const stale = rows.map((row) => row.datname).filter((name) => createdAt(name) < cutoff);
    for (const name of stale) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
    return stale;
  });
}

/** When a scratch name was made, in seconds since the epoch; NaN for a name not made here. */
function createdAt(name: string): number {
  return Number(/_(\d{10})_[0-9a-f]{8}$/.exec(name)?.[1]);
}

function databaseUrl(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  return withClient(adminDatabaseUrl(), work);
}
