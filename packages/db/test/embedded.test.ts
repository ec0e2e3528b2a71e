import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  createPool,
  migrateDatabase,
  openEmbeddedPostgres,
  preparedQuery,
  startEmbeddedPostgres,
  withClient,
} from '../src/index.js';

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

  it('runs prepared statements on a new connection, and from a second pool, as a shared session needs', async () => {
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pglite') });
    const statement = { text: 'SELECT $1::int + 1 AS n', values: [1] };
    // PGlite serves one session to every connection: a name prepared on one exists on the next.
    const named = createPool(embedded.url, 1);
    const [server, cli] = [
      createPool(embedded.url, 1, { sharedSession: true }),
      createPool(embedded.url, 1, { sharedSession: true }),
    ];
    try {
      expect(await preparedQuery(named, statement)).toEqual([{ n: 2 }]);
      // The server's pool, after closing its idle connection (pg does after 10 s), and a CLI's beside it.
      expect(await preparedQuery(server, statement)).toEqual([{ n: 2 }]);
      (await server.connect()).release(true);
      expect(await preparedQuery(server, { ...statement, values: [2] })).toEqual([{ n: 3 }]);
      expect(await preparedQuery(cli, statement)).toEqual([{ n: 2 }]);
      // What a named statement meets there: the session has it, this connection's pg does not know.
      const second = createPool(embedded.url, 1);
      await expect(preparedQuery(second, statement)).rejects.toMatchObject({ code: '42P05' });
      await second.end();
    } finally {
      await Promise.all([named.end(), server.end(), cli.end()]);
      await embedded.stop();
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

describe('openEmbeddedPostgres', () => {
  const exists = (file: string) =>
    access(file).then(
      () => true,
      () => false,
    );

  it("lets a second opener of the folder use the first one's server instead of opening the files twice", async () => {
    const store = path.join(dataDir, 'pglite');
    const owner = await openEmbeddedPostgres({ dataDir: store });
    try {
      expect(owner).toMatchObject({ shared: false, ownerPid: process.pid });
      const guest = await openEmbeddedPostgres({ dataDir: store });
      expect(guest).toMatchObject({ shared: true, ownerPid: process.pid, url: owner.url });

      await withClient(guest.url, (client) => client.query('CREATE TABLE visits (who text)'));
      await withClient(guest.url, (client) => client.query("INSERT INTO visits VALUES ('guest')"));
      await guest.stop();
      const rows = await withClient(owner.url, (client) => client.query('SELECT who FROM visits'));
      expect(rows.rows).toEqual([{ who: 'guest' }]);
    } finally {
      await owner.stop();
    }
    expect(await exists(`${store}.owner.json`)).toBe(false);
  });

  it('takes over a folder whose recorded owner has died', async () => {
    const store = path.join(dataDir, 'pglite');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(`${store}.owner.json`, JSON.stringify({ pid: dead, url: 'postgresql://postgres@127.0.0.1:1/postgres' }));
    const opened = await openEmbeddedPostgres({ dataDir: store });
    try {
      expect(opened).toMatchObject({ shared: false, ownerPid: process.pid });
      expect((await withClient(opened.url, (client) => client.query('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
    } finally {
      await opened.stop();
    }
  });

  it('takes over when the recorded process lives but its server no longer answers (a reused pid)', async () => {
    const store = path.join(dataDir, 'pglite');
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    closed.close();
    // This test process is alive, and nothing listens on the recorded port.
    await writeFile(
      `${store}.owner.json`,
      JSON.stringify({ pid: process.pid, url: `postgresql://postgres@127.0.0.1:${port}/postgres` }),
    );
    const opened = await openEmbeddedPostgres({ dataDir: store });
    try {
      expect(opened.shared).toBe(false);
    } finally {
      await opened.stop();
    }
  }, 20_000);
});
