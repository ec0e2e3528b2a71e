/**
 * kill -9 at each step of the writes that span the database and the warehouse (a dataset's and
 * a table's create, update and delete; recorded: after the change is recorded, before the
 * warehouse is called; applied: after the warehouse, before the outcome is recorded), and in the
 * middle of a burst of parallel creates; then a restart on the same database and data folder. The
 * records and DuckDB must agree: no schema or table without a live record, no live record without
 * its schema or table, the stored columns in the table. The service runs as its own process
 * (src/server.ts) and kills itself with SIGKILL at the named step (TEST_CRASH_POINT).
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { mintLocalToken } from '../src/auth/index.js';
import { createDatabaseClient, type Database } from '../src/database.js';
import { appRoot, migrationsDir } from '../src/paths.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';
import { TEST_SECRET } from './context.js';
import { openWarehouseCatalog } from './warehouse-catalog.js';

jest.setTimeout(300_000);

let database: ScratchDatabase;
let dataDir: string;
let db: Database;
let token: string;

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'collab_crash', migrationsDir });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-crash-'));
  db = createDatabaseClient(database.url, 2);
  await bootstrapTenant(db, { tenantName: 'Crash', adminEmail: 'admin@crash.test', adminName: 'Admin', adminSub: 'idp|crash' });
  token = mintLocalToken({ secret: TEST_SECRET, sub: 'idp|crash' });
});
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

function start(env: Record<string, string | undefined> = {}) {
  return startService('src/server.ts', {
    cwd: appRoot,
    env: {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: '0',
      // info: startService waits for the "listening" line.
      LOG_LEVEL: 'info',
      COLLAB_JWT_SECRET: TEST_SECRET,
      COLLAB_JWKS_URL: undefined,
      // Short, so that a restarted service takes the dead one's changes for interrupted at once.
      COLLAB_WAREHOUSE_LEASE_SECONDS: '1',
      COLLAB_RECONCILE_INTERVAL_SECONDS: '1',
      ...env,
    },
    timeoutMs: 90_000,
    keepLogs: false,
  });
}

async function call(baseUrl: string, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${baseUrl}/api/v1${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as { id: string } };
}

async function created(baseUrl: string, urlPath: string, body: unknown): Promise<string> {
  const res = await call(baseUrl, 'POST', urlPath, body);
  expect(res.status).toBe(201);
  return res.body.id;
}

const columns = (...names: string[]) => names.map((name) => ({ name, type: 'STRING' }));

async function crashDuring(point: string, request: (baseUrl: string) => Promise<unknown>): Promise<void> {
  const service = await start({ TEST_CRASH_POINT: point });
  const exited = once(service.child, 'exit');
  await request(service.url).catch(() => undefined);
  const [code, signal] = (await exited) as [number | null, string | null];
  expect({ point, code, signal }).toEqual({ point, code: null, signal: 'SIGKILL' });
}

/** Restarts the service, waits until the reconciler has finished every interrupted change, and stops it. */
async function restartAndSettle(): Promise<void> {
  const service = await start();
  try {
    const deadline = Date.now() + 60_000;
    while ((await db.warehouseChange.count()) > 0) {
      if (Date.now() > deadline) throw new Error('interrupted changes were not finished');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    // Stopping waits for the reconciler's round under way (its start-up sweep among them).
    expect(await service.stop()).toBe(0);
  }
  expect(await db.warehouseChange.count()).toBe(0);
}

/** Over the whole database and DuckDB file: exactly the live records' objects, with their columns. */
async function expectAgreement(): Promise<void> {
  const catalog = await openWarehouseCatalog(dataDir);
  try {
    const datasets = await db.dataset.findMany({ where: { archivedAt: null }, select: { id: true } });
    const tables = await db.table.findMany({ where: { archivedAt: null } });
    const schemas = await catalog.schemas();
    expect(schemas.sort()).toEqual(datasets.map(({ id }) => physicalNames({ datasetId: id }).dataset).sort());
    for (const { id } of datasets) {
      const own = tables.filter((table) => table.datasetId === id);
      expect(await catalog.tablesOf(id)).toEqual(
        own.map((table) => physicalNames({ datasetId: id, tableId: table.id }).table).sort(),
      );
      for (const table of own) {
        const stored = (table.schema as { name: string }[]).map((field) => field.name);
        expect((await catalog.columnsOf(id, table.id)).map((column) => column.name)).toEqual(stored);
      }
    }
  } finally {
    catalog.close();
  }
}

const STEPS = ['recorded', 'applied'] as const;

describe('kill -9 at each step of a dataset and a table change, then a restart', () => {
  it('finishes every change: the records and DuckDB agree, and each change is applied', async () => {
    const setup = await start();
    const projectId = await created(setup.url, '/projects', { name: 'Crash' });
    const fixtures = {} as Record<(typeof STEPS)[number], { dataset: string; deleted: string; table: string; doomed: string }>;
    for (const step of STEPS) {
      const dataset = await created(setup.url, '/datasets', { name: `Base ${step}`, project_id: projectId });
      const deleted = await created(setup.url, '/datasets', { name: `Deleted ${step}`, project_id: projectId });
      await created(setup.url, '/tables', { name: 'Inside', schema: columns('a'), dataset_id: deleted });
      const table = await created(setup.url, '/tables', { name: 'Updated', schema: columns('a'), dataset_id: dataset });
      const doomed = await created(setup.url, '/tables', { name: 'Doomed', schema: columns('a'), dataset_id: dataset });
      fixtures[step] = { dataset, deleted, table, doomed };
    }
    expect(await setup.stop()).toBe(0);

    for (const step of STEPS) {
      const { dataset, deleted, table, doomed } = fixtures[step];
      await crashDuring(`create_dataset:${step}`, (url) =>
        call(url, 'POST', '/datasets', { name: `Created ${step}`, project_id: projectId }),
      );
      await crashDuring(`update_dataset:${step}`, (url) =>
        call(url, 'PATCH', `/datasets/${dataset}`, { name: `Renamed ${step}` }),
      );
      await crashDuring(`delete_dataset:${step}`, (url) => call(url, 'DELETE', `/datasets/${deleted}`));
      await crashDuring(`create_table:${step}`, (url) =>
        call(url, 'POST', '/tables', { name: 'Created', schema: columns('x', 'y'), dataset_id: dataset }),
      );
      await crashDuring(`update_table:${step}`, (url) => call(url, 'PATCH', `/tables/${table}`, { schema: columns('a', 'b') }));
      await crashDuring(`delete_table:${step}`, (url) => call(url, 'DELETE', `/tables/${doomed}`));
    }

    await restartAndSettle();
    await expectAgreement();
    // A change is finished, whichever step it was interrupted at: the client's request took effect.
    for (const step of STEPS) {
      const { dataset, deleted, table, doomed } = fixtures[step];
      expect(await db.dataset.count({ where: { name: `Created ${step}`, archivedAt: null } })).toBe(1);
      expect(await db.dataset.findUniqueOrThrow({ where: { id: dataset } })).toMatchObject({ name: `Renamed ${step}` });
      expect(await db.dataset.findUniqueOrThrow({ where: { id: deleted } })).toMatchObject({ archivedAt: expect.any(Date) });
      expect(await db.table.count({ where: { datasetId: deleted, archivedAt: null } })).toBe(0);
      expect(await db.table.count({ where: { datasetId: dataset, name: 'Created', archivedAt: null } })).toBe(1);
      expect((await db.table.findUniqueOrThrow({ where: { id: table } })).schema).toEqual([
        expect.objectContaining({ name: 'a' }),
        expect.objectContaining({ name: 'b' }),
      ]);
      expect(await db.table.findUniqueOrThrow({ where: { id: doomed } })).toMatchObject({ archivedAt: expect.any(Date) });
    }
  });
});

describe('kill -9 in the middle of a burst of parallel creates', () => {
  it('leaves, after a restart, every dataset and table either live with its object or archived without one', async () => {
    const service = await start();
    const projectId = await created(service.url, '/projects', { name: 'Burst' });
    const datasetId = await created(service.url, '/datasets', { name: 'Burst', project_id: projectId });
    const exited = once(service.child, 'exit');
    const burst = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0
        ? call(service.url, 'POST', '/datasets', { name: `Burst ${i}`, project_id: projectId })
        : call(service.url, 'POST', '/tables', { name: `Burst ${i}`, schema: columns('a', 'b'), dataset_id: datasetId })
      ).catch(() => undefined),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    service.child.kill('SIGKILL');
    await exited;
    await Promise.all(burst);

    await restartAndSettle();
    await expectAgreement();
  });
});
