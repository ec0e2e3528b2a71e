import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { createScratchDatabase, reserveScratchDatabase, type ScratchDatabase } from '../src/dev/index.js';
import { ensureDatabase, migrateDatabase, MigrationError, pendingMigrations, readMigrations, withClient } from '../src/index.js';

let dir: string;
let db: ScratchDatabase;

async function writeMigration(name: string, sql: string) {
  await mkdir(path.join(dir, name), { recursive: true });
  await writeFile(path.join(dir, name, 'migration.sql'), sql);
}

async function query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  return withClient(db.url, async (client) => (await client.query<T>(sql)).rows);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  db = await createScratchDatabase({ label: 'migrations_test' });
});

afterEach(async () => {
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('migrateDatabase', () => {
  it('applies migrations in name order and records them as Prisma does', async () => {
    const second = 'ALTER TABLE "things" ADD COLUMN "label" TEXT;';
    await writeMigration('20260102000000_label', second);
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');

    expect(await migrateDatabase(db.url, dir)).toEqual(['20260101000000_init', '20260102000000_label']);

    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({
      migration_name: '20260102000000_label',
      checksum: createHash('sha256').update(second).digest('hex'),
      applied_steps_count: 1,
    });
    expect(rows[1]?.finished_at).toBeInstanceOf(Date);
    expect(await query("SELECT column_name FROM information_schema.columns WHERE table_name = 'things' ORDER BY 1")).toEqual([
      { column_name: 'id' },
      { column_name: 'label' },
    ]);
  });

  it('applies nothing the second time', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    await migrateDatabase(db.url, dir);
    expect(await migrateDatabase(db.url, dir)).toEqual([]);
  });

  it('rolls a failing migration back completely and keeps the ones before it', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    await writeMigration('20260102000000_broken', 'CREATE TABLE "half" ("id" INT); SELECT no_such_function();');

    await expect(migrateDatabase(db.url, dir)).rejects.toThrow(
      /Migration 20260102000000_broken failed and was rolled back: function no_such_function\(\) does not exist/,
    );
    expect(await query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")).toEqual([
      { table_name: '_prisma_migrations' },
      { table_name: 'things' },
    ]);
    expect(await query('SELECT migration_name FROM "_prisma_migrations"')).toEqual([{ migration_name: '20260101000000_init' }]);
  });

  it('refuses to go on when an applied migration was edited afterwards', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    await migrateDatabase(db.url, dir);
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" BIGSERIAL PRIMARY KEY);');
    await expect(migrateDatabase(db.url, dir)).rejects.toThrow('Migration 20260101000000_init was changed after it was applied');
  });

  it('lets concurrent runs (replicas starting together) apply each migration once', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    const results = await Promise.all([migrateDatabase(db.url, dir), migrateDatabase(db.url, dir), migrateDatabase(db.url, dir)]);
    expect(results.flat()).toEqual(['20260101000000_init']);
    expect(await query('SELECT count(*)::int AS n FROM "_prisma_migrations"')).toEqual([{ n: 1 }]);
  });

  it('creates a missing database when asked to', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    const missing = await reserveScratchDatabase('migrations_created');
    try {
      expect(await migrateDatabase(missing.url, dir, { createDatabase: true })).toEqual(['20260101000000_init']);
      await ensureDatabase(missing.url); // already there: nothing happens
    } finally {
      await missing.drop();
    }
  });
});

describe('createScratchDatabase with migrations', () => {
  const migrated = async (database: ScratchDatabase) =>
    withClient(database.url, async (client) => ({
      migrations: (await client.query('SELECT migration_name FROM "_prisma_migrations" ORDER BY 1')).rows,
      columns: (await client.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'things' ORDER BY 1"))
        .rows,
    }));

  it('gives each caller a database of its own, migrated, and follows a changed migration', async () => {
    await writeMigration('20260101000000_init', 'CREATE TABLE "things" ("id" SERIAL PRIMARY KEY);');
    const [first, second] = await Promise.all([
      createScratchDatabase({ label: 'template_test', migrationsDir: dir }),
      createScratchDatabase({ label: 'template_test', migrationsDir: dir }),
    ]);
    try {
      expect(first.name).not.toBe(second.name);
      for (const database of [first, second]) {
        expect(await migrated(database)).toEqual({
          migrations: [{ migration_name: '20260101000000_init' }],
          columns: [{ column_name: 'id' }],
        });
      }
      // A row written to one copy is not in the other, nor in the next database made.
      await withClient(first.url, (client) => client.query('INSERT INTO "things" DEFAULT VALUES'));
      await writeMigration('20260102000000_label', 'ALTER TABLE "things" ADD COLUMN "label" TEXT;');
      const third = await createScratchDatabase({ label: 'template_test', migrationsDir: dir });
      try {
        expect(await migrated(third)).toEqual({
          migrations: [{ migration_name: '20260101000000_init' }, { migration_name: '20260102000000_label' }],
          columns: [{ column_name: 'id' }, { column_name: 'label' }],
        });
        for (const database of [second, third]) {
          expect(await withClient(database.url, async (client) => (await client.query('SELECT * FROM "things"')).rows)).toEqual(
            [],
          );
        }
      } finally {
        await third.drop();
      }
    } finally {
      await Promise.all([first.drop(), second.drop()]);
    }
  });

  it('leaves no template behind when a migration fails', async () => {
    await writeMigration('20260101000000_broken', 'CREATE TABLE "things" (;');
    await expect(createScratchDatabase({ label: 'template_test', migrationsDir: dir })).rejects.toThrow(MigrationError);
    // Template names carry a digest of the migrations' names and checksums.
    const [broken] = await readMigrations(dir);
    const key = createHash('sha256').update(`${broken!.name}\n${broken!.checksum}\n`).digest('hex').slice(0, 12);
    const left = await withClient(db.url, async (client) => {
      return (await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`%\\_${key}\\_%`])).rows;
    });
    expect(left).toEqual([]);
  });
});

describe('readMigrations', () => {
  it('lists migration folders only, sorted', async () => {
    await writeMigration('20260102000000_b', 'SELECT 2;');
    await writeMigration('20260101000000_a', 'SELECT 1;');
    expect((await readMigrations(dir)).map((m) => m.name)).toEqual(['20260101000000_a', '20260102000000_b']);
  });
});

describe('pendingMigrations', () => {
  const migration = (name: string) => ({ name, sql: '', checksum: name });
  const applied = (name: string, finished = true) => ({
    migration_name: name,
    checksum: name,
    finished_at: finished ? new Date() : null,
  });

  it('returns the migrations not applied yet, including ones older than applied ones', () => {
    expect(pendingMigrations([migration('a'), migration('b'), migration('c')], [applied('b')]).map((m) => m.name)).toEqual([
      'a',
      'c',
    ]);
  });

  it('refuses while a migration is marked as started but unfinished', () => {
    expect(() => pendingMigrations([migration('a')], [applied('a', false)])).toThrow(MigrationError);
    expect(() => pendingMigrations([migration('a')], [applied('a', false)])).toThrow(/prisma migrate resolve/);
  });
});
