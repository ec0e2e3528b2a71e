import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkDrift, createMigration, describeDrift, diffDatamodels, isEmptyDiff } from '../src/dev/index.js';

const HEADER = `generator client {
  provider = "prisma-client"
  output   = "../src/generated/prisma"
}

datasource db {
  provider = "postgresql"
}
`;
const ONE_MODEL = `${HEADER}
model Note {
  id        String   @id @default(uuid()) @db.Uuid
  title     String
  createdAt DateTime @default(now()) @map("created_at") @db.Timestamptz(3)

  @@map("notes")
}
`;
const TWO_FIELDS_MORE = ONE_MODEL.replace(
  '  title     String\n',
  '  title     String\n  body      String?\n  pinned    Boolean  @default(false)\n',
).replace('  @@map("notes")', '  @@index([createdAt])\n  @@map("notes")');

let app: string;
let schemaPath: string;
let migrationsDir: string;

function git(...args: string[]) {
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: app, stdio: 'pipe' });
}

beforeAll(async () => {
  app = await mkdtemp(path.join(os.tmpdir(), 'drift-'));
  schemaPath = path.join(app, 'prisma', 'schema.prisma');
  migrationsDir = path.join(app, 'prisma', 'migrations');
  await mkdir(path.dirname(schemaPath), { recursive: true });
  git('init', '-q');
});
afterAll(() => rm(app, { recursive: true, force: true }));

describe('migration authoring and the drift check', () => {
  it('writes the first migration from an empty database', async () => {
    await writeFile(schemaPath, ONE_MODEL);
    const folder = await createMigration({ name: 'init', schemaPath, migrationsDir, now: new Date('2026-01-01T00:00:00Z') });
    expect(path.basename(folder ?? '')).toBe('20260101000000_init');
    const sql = await readFile(path.join(folder ?? '', 'migration.sql'), 'utf8');
    expect(sql).toContain('CREATE TABLE "notes"');
    expect(await readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8')).toContain('provider = "postgresql"');
    expect((await checkDrift({ schemaPath, migrationsDir })).inSync).toBe(true);
    git('add', '.');
    git('commit', '-q', '-m', 'init');
  });

  it('reports a schema change that has no migration, naming what differs', async () => {
    await writeFile(schemaPath, TWO_FIELDS_MORE);
    const report = await checkDrift({ schemaPath, migrationsDir });
    expect(report.inSync).toBe(false);
    expect(report.onlyInSchema).toEqual(
      expect.arrayContaining([
        'column notes.body: text',
        'column notes.pinned: bool not null default false',
        expect.stringMatching(/^index notes_created_at_idx: CREATE INDEX/),
      ]),
    );
    expect(describeDrift(report)).toMatch(/only in schema.prisma: column notes.body: text/);
  });

  it('writes the migration for the change, diffing against the committed schema', async () => {
    const folder = await createMigration({ name: 'add_body', schemaPath, migrationsDir, now: new Date('2026-01-02T00:00:00Z') });
    const sql = await readFile(path.join(folder ?? '', 'migration.sql'), 'utf8');
    expect(sql).toMatch(/ALTER TABLE "notes" ADD COLUMN\s+"body" TEXT/);
    expect(sql).not.toContain('CREATE TABLE');
    expect((await checkDrift({ schemaPath, migrationsDir })).inSync).toBe(true);
    expect(await readdir(migrationsDir)).toEqual(['20260101000000_init', '20260102000000_add_body', 'migration_lock.toml']);
  });

  it('reports a migration that schema.prisma does not describe', async () => {
    await mkdir(path.join(migrationsDir, '20260103000000_manual'));
    await writeFile(
      path.join(migrationsDir, '20260103000000_manual', 'migration.sql'),
      'ALTER TABLE "notes" ADD COLUMN "extra" INT;',
    );
    const report = await checkDrift({ schemaPath, migrationsDir });
    expect(report.onlyInMigrations).toEqual(['column notes.extra: int4']);
    await rm(path.join(migrationsDir, '20260103000000_manual'), { recursive: true });
  });

  it('writes nothing when the schema did not change', async () => {
    git('add', '.');
    git('commit', '-q', '-m', 'add body');
    expect(await createMigration({ name: 'nothing', schemaPath, migrationsDir })).toBeUndefined();
  });
});

describe('isEmptyDiff', () => {
  it('treats a script of comments as empty', async () => {
    expect(isEmptyDiff(await diffDatamodels({ from: ONE_MODEL, to: ONE_MODEL }))).toBe(true);
    expect(isEmptyDiff('-- AlterTable\nALTER TABLE x ADD COLUMN y INT;')).toBe(false);
  });
});
