import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrateDatabase, startEmbeddedPostgres, withClient } from '../src/index.js';
import { mkdir, writeFile } from 'node:fs/promises';

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe('startEmbeddedPostgres', () => {
  it('serves the Postgres protocol, runs migrations with pg_trgm, and keeps data across restarts', async () => {
    const migrations = path.join(dataDir, 'migrations');
    await mkdir(path.join(migrations, '20260101000000_init'), { recursive: true });
    await writeFile(
      path.join(migrations, '20260101000000_init', 'migration.sql'),
      'CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE TABLE "notes" ("body" TEXT NOT NULL); CREATE INDEX notes_body_trgm ON "notes" USING gin ("body" gin_trgm_ops);',
    );
    const store = path.join(dataDir, 'pglite');

    const first = await startEmbeddedPostgres({ dataDir: store, extensions: ['pg_trgm'] });
    try {
      expect(await migrateDatabase(first.url, migrations)).toEqual(['20260101000000_init']);
      await withClient(first.url, (client) => client.query("INSERT INTO notes VALUES ('hello world')"));
    } finally {
      await first.stop();
    }

    const second = await startEmbeddedPostgres({ dataDir: store, extensions: ['pg_trgm'] });
    try {
      expect(await migrateDatabase(second.url, migrations)).toEqual([]);
      const rows = await withClient(second.url, (client) =>
        client.query<{ body: string }>("SELECT body FROM notes WHERE body ILIKE '%WORLD%' AND similarity(body, 'hello') > 0.1"),
      );
      expect(rows.rows).toEqual([{ body: 'hello world' }]);
    } finally {
      await second.stop();
    }
  });

  it('serves several connections at once', async () => {
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pglite') });
    try {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          withClient(embedded.url, (client) => client.query<{ n: number }>('SELECT $1::int AS n', [i])),
        ),
      );
      expect(results.map((r) => r.rows[0]?.n)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await embedded.stop();
    }
  });
});
