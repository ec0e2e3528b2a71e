/**
 * The worker in real server processes: kill -9 in the middle of a load (after the file was read
 * and checked, and after the warehouse committed), then a restart on the same database and data
 * folder: the job ends, never left Running, and the table has all of its rows or none. And the
 * worker on the embedded database (PGlite), the default without DATABASE_URL.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { runToExit } from '@repo/testing';
import { mintLocalToken } from '../../src/auth/index.js';
import { createDatabaseClient, type Database } from '../../src/database.js';
import { appRoot, migrationsDir } from '../../src/paths.js';
import { bootstrapTenant } from '../../src/tenants/bootstrap.js';
import { TEST_SECRET } from '../context.js';
import { client, start } from '../service-process.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';

jest.setTimeout(300_000);

const ROWS = 5000;
const CSV = `id,name\n${Array.from({ length: ROWS }, (_, i) => `${i},name ${i}`).join('\n')}\n`;

async function rowCount(dataDir: string, datasetId: string, tableId: string): Promise<number> {
  const catalog = await openWarehouseCatalog(dataDir);
  try {
    return (await catalog.rows(datasetId, tableId)).length;
  } finally {
    catalog.close();
  }
}

describe('kill -9 during a load, then a restart', () => {
  let database: ScratchDatabase;
  let dataDir: string;
  let db: Database;
  let token: string;
  let env: Record<string, string>;
  const POINTS = ['load_job:prepared', 'load_job:committed'];
  beforeAll(async () => {
    database = await createScratchDatabase({ label: 'collab_load_crash', migrationsDir });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-load-crash-'));
    db = createDatabaseClient(database.url, 2);
    await bootstrapTenant(db, { tenantName: 'Crash', adminEmail: 'admin@crash.test', adminName: 'Admin', adminSub: 'idp|crash' });
    token = mintLocalToken({ secret: TEST_SECRET, sub: 'idp|crash' });
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it.each(POINTS)('at %s: the job ends, the table has all of its rows or none', async (point) => {
    const doomed = await start({ ...env, TEST_CRASH_POINT: point });
    const exited = once(doomed.child, 'exit');
    // The case's table is made by the doomed process (its crash point is in the load): no process of its own.
    const doomedApi = client(doomed.url, token);
    const { tableId, datasetId } = await doomedApi.table();
    const started = await doomedApi.upload(tableId, CSV);
    expect(started).toMatchObject({ status: 201, body: { status: 'Running' } });
    expect(((await exited) as [number | null, string | null])[1]).toBe('SIGKILL');

    const restarted = await start(env);
    try {
      const deadline = Date.now() + 120_000;
      let job;
      do {
        await new Promise((resolve) => setTimeout(resolve, 500));
        job = (await client(restarted.url, token).call('GET', `/load_job/${started.body.id}`)).body;
        if (Date.now() > deadline) throw new Error(`the job is still ${String(job.status)}`);
      } while (job.status === 'Running');
      // Retried (the warehouse load is idempotent), or failed with nothing loaded.
      expect(['Completed', 'Failed']).toContain(job.status);
      while ((await db.warehouseChange.count()) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await restarted.stop()).toBe(0);
      const rows = await rowCount(dataDir, datasetId, tableId);
      expect({ status: job.status, rows }).toEqual(
        job.status === 'Completed' ? { status: 'Completed', rows: ROWS } : { status: 'Failed', rows: 0 },
      );
    } finally {
      if (restarted.child.exitCode === null) await restarted.stop();
    }
  });
});

describe('on the embedded database (no DATABASE_URL)', () => {
  it('runs load jobs through pg-boss on PGlite', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-load-embedded-'));
    const env = { DATABASE_URL: undefined, DATA_DIR: dataDir, COLLAB_JWT_SECRET: TEST_SECRET };
    try {
      const service = await start(env);
      try {
        const bootstrap = await runToExit('src/cli.ts', {
          cwd: appRoot,
          args: ['bootstrap', '--tenant-name', 'Embedded', '--admin-email', 'ada@embedded.test', '--admin-sub', 'idp|embedded'],
          env,
        });
        expect(bootstrap.code).toBe(0);
        const api = client(service.url, mintLocalToken({ secret: TEST_SECRET, sub: 'idp|embedded' }));
        const { tableId } = await api.table();
        const started = await api.upload(tableId, CSV);
        expect(started.status).toBe(201);
        const deadline = Date.now() + 60_000;
        let job;
        do {
          await new Promise((resolve) => setTimeout(resolve, 250));
          job = (await api.call('GET', `/load_job/${started.body.id}`)).body;
        } while (job.status === 'Running' && Date.now() < deadline);
        expect(job).toMatchObject({ status: 'Completed', statistics: { rows_loaded: ROWS } });
      } finally {
        expect(await service.stop()).toBe(0);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
