/**
 * The reconciler puts the warehouse and the records back in agreement: it finishes the changes a
 * crash interrupted (simulated here by a crash point that throws where a crash test's process
 * would die), drops objects that no live record has, and makes again the objects of live records
 * that are missing. The same reconciliation runs against DuckDB and against the BigQuery adapter
 * talking to its loopback server.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '@repo/http';
import type { Actor } from '../src/access/index.js';
import { type Field, physicalNames, type WarehouseDataset } from '../src/adapters/warehouse/index.js';
import { createDataset, updateDataset } from '../src/datasets/service.js';
import { changeDeps } from '../src/deps.js';
import { createProject } from '../src/projects/service.js';
import { reconcile } from '../src/reconciler.js';
import { createTableBody } from '../src/tables/schemas.js';
import { archiveTable, createTable, updateTable } from '../src/tables/service.js';
import { createTestContext, type TestContext } from './context.js';
import { seedTenant } from './fixtures.js';
import { openWarehouseCatalog } from './warehouse-catalog.js';
import { type FakeBigQuery, startFakeBigQuery } from './warehouse/fake-bigquery.js';

const logger = createLogger({ service: 'collab-api', level: 'silent' });

/** What a warehouse backend lets the test do behind the app's back. */
interface Backend {
  addOrphanDataset(datasetId: string, tableIds: string[]): Promise<void> | void;
  addOrphanTable(datasetId: string, tableId: string): Promise<void> | void;
  dropDataset(datasetId: string): Promise<void> | void;
  dropTable(datasetId: string, tableId: string): Promise<void> | void;
  columnsOf(datasetId: string, tableId: string): Promise<string[]> | string[];
  close(): Promise<void> | void;
}

describe.each([
  ['DuckDB', duckdb],
  ['BigQuery (loopback server)', bigquery],
])('reconciliation on %s', (_name, backendOf) => {
  let ctx: TestContext;
  let backend: Backend;
  let editor: Actor;
  beforeAll(async () => {
    ({ ctx, backend } = await backendOf());
    const acme = await seedTenant(ctx, 'Acme');
    editor = { userId: acme.editor.id, tenantId: acme.id, role: acme.editor.role };
  });
  afterAll(async () => {
    await backend.close();
    await ctx.close();
  });

  const deps = () => changeDeps(ctx.deps);
  const run = (sweep = true) => reconcile({ ...ctx.deps, leaseSeconds: 60, logger }, { sweep });
  /** The deps of a request whose process dies at `point`: it throws there, leaving what a kill would. */
  const crashingAt = (point: string) => ({
    ...deps(),
    crashPoint: (reached: string) => {
      if (reached === point) throw new Error(`crashed at ${point}`);
    },
  });
  const expire = () => ctx.db.$executeRaw`UPDATE warehouse_changes SET lease_until = now() - interval '1 second'`;
  const schema = (...names: string[]) => createTableBody.shape.schema.parse(names.map((name) => ({ name, type: 'STRING' })));

  async function newDataset(name: string) {
    const project = await createProject(ctx.db, editor, { name });
    return createDataset(deps(), editor, { name, project_id: project.id });
  }

  /** What every reconciliation must leave: no change pending, and exactly the live records' objects, with their columns. */
  async function expectAgreement(): Promise<void> {
    expect(await ctx.db.warehouseChange.count()).toBe(0);
    const datasets = await ctx.db.dataset.findMany({ where: { archivedAt: null }, select: { id: true } });
    const tables = await ctx.db.table.findMany({ where: { archivedAt: null } });
    const expected: WarehouseDataset[] = datasets.map(({ id }) => ({
      datasetId: id,
      tableIds: tables.filter((table) => table.datasetId === id).map((table) => table.id),
    }));
    const sorted = (list: WarehouseDataset[]) =>
      list.map((d) => ({ ...d, tableIds: [...d.tableIds].sort() })).sort((a, b) => a.datasetId.localeCompare(b.datasetId));
    expect(sorted(await ctx.deps.warehouse.listDatasets())).toEqual(sorted(expected));
    for (const table of tables) {
      expect(await backend.columnsOf(table.datasetId, table.id)).toEqual((table.schema as unknown as Field[]).map((f) => f.name));
    }
  }

  it('drops objects that no live record has, and makes again those of live records that are missing', async () => {
    const kept = await newDataset('Kept');
    const table = await createTable(deps(), editor, { name: 'Kept', dataset_id: kept.id, schema: schema('a', 'b') });
    const lost = await newDataset('Lost');
    const lostTable = await createTable(deps(), editor, { name: 'Lost', dataset_id: lost.id, schema: schema('x') });
    await backend.dropTable(kept.id, table.id);
    await backend.dropDataset(lost.id);
    const orphan = randomUUID();
    await backend.addOrphanDataset(orphan, [randomUUID()]);
    await backend.addOrphanTable(kept.id, randomUUID());
    // A table archived in the records whose object stayed (as the old code could leave one).
    const archived = await createTable(deps(), editor, { name: 'Archived', dataset_id: kept.id, schema: schema('a') });
    await ctx.db.table.update({ where: { id: archived.id }, data: { archivedAt: new Date(), liveName: null } });

    expect(await run()).toEqual({ interrupted: 0, repaired: 6, partialWrites: 0 });
    await expectAgreement();
    expect(await backend.columnsOf(lost.id, lostTable.id)).toEqual(['x']);
    expect(await run()).toEqual({ interrupted: 0, repaired: 0, partialWrites: 0 });
  });

  it.each([
    ['create_dataset', 'recorded'],
    ['create_dataset', 'applied'],
  ])('finishes a dataset create interrupted at %s:%s', async (kind, step) => {
    const project = await createProject(ctx.db, editor, { name: 'Interrupted' });
    await expect(
      createDataset(crashingAt(`${kind}:${step}`), editor, { name: `Made ${step}`, project_id: project.id }),
    ).rejects.toThrow('crashed');
    expect(await ctx.db.warehouseChange.count()).toBe(1);
    // Within its lease, the change is left to its process.
    expect(await run(false)).toEqual({ interrupted: 0, repaired: 0, partialWrites: 0 });
    await expire();
    expect(await run(false)).toEqual({ interrupted: 1, repaired: 0, partialWrites: 0 });
    expect(await ctx.db.dataset.findFirstOrThrow({ where: { name: `Made ${step}` } })).toMatchObject({ archivedAt: null });
    await expectAgreement();
  });

  it.each(['recorded', 'applied'])('finishes table changes interrupted when %s', async (step) => {
    const dataset = await newDataset(`Tables ${step}`);
    const updated = await createTable(deps(), editor, { name: 'Updated', dataset_id: dataset.id, schema: schema('a') });
    const deleted = await createTable(deps(), editor, { name: 'Deleted', dataset_id: dataset.id, schema: schema('a') });
    await expect(
      createTable(crashingAt(`create_table:${step}`), editor, { name: 'Created', dataset_id: dataset.id, schema: schema('a') }),
    ).rejects.toThrow('crashed');
    await expect(
      updateTable(crashingAt(`update_table:${step}`), editor, updated.id, { schema: schema('a', 'b') }),
    ).rejects.toThrow('crashed');
    await expect(archiveTable(crashingAt(`delete_table:${step}`), editor, deleted.id)).rejects.toThrow('crashed');
    await expire();

    expect(await run()).toEqual({ interrupted: 3, repaired: 0, partialWrites: 0 });
    await expectAgreement();
    expect(await ctx.db.table.findFirstOrThrow({ where: { name: 'Created', datasetId: dataset.id } })).toMatchObject({
      archivedAt: null,
    });
    expect(await backend.columnsOf(dataset.id, updated.id)).toEqual(['a', 'b']);
    expect(await ctx.db.table.findUniqueOrThrow({ where: { id: deleted.id } })).toMatchObject({
      archivedAt: expect.any(Date),
      liveName: null,
    });
  });

  it('undoes an interrupted change that the warehouse refuses when it is applied again', async () => {
    const dataset = await newDataset('Refused later');
    await expect(updateDataset(crashingAt('update_dataset:recorded'), editor, dataset.id, { name: 'Never' })).rejects.toThrow(
      'crashed',
    );
    // Meanwhile the warehouse lost the dataset, so the rename cannot be applied.
    await backend.dropDataset(dataset.id);
    await expire();

    expect(await run()).toEqual({ interrupted: 1, repaired: 1, partialWrites: 0 });
    expect(await ctx.db.dataset.findUniqueOrThrow({ where: { id: dataset.id } })).toMatchObject({
      name: 'Refused later',
      archivedAt: null,
    });
    await expectAgreement();
  });

  it('leaves the records and objects of a change under way to it', async () => {
    const dataset = await newDataset('Busy');
    await expect(
      updateDataset(crashingAt('update_dataset:recorded'), editor, dataset.id, { name: 'Busy still' }),
    ).rejects.toThrow('crashed');
    await backend.dropDataset(dataset.id);
    expect(await run()).toEqual({ interrupted: 0, repaired: 0, partialWrites: 0 });
    await expire();
    await run();
    await expectAgreement();
  });
});

describe('storage', () => {
  it('removes the temporary files of writes a crash cut short, once an hour has passed without them growing', async () => {
    const ctx = await createTestContext();
    try {
      const temporary = path.join(ctx.dataDir, 'objects', '.tmp');
      await mkdir(temporary, { recursive: true });
      const [stale, fresh] = [path.join(temporary, randomUUID()), path.join(temporary, randomUUID())];
      await writeFile(stale, 'an export cut short');
      await writeFile(fresh, 'an export under way');
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      await utimes(stale, twoHoursAgo, twoHoursAgo);
      expect(await reconcile({ ...ctx.deps, leaseSeconds: 60, logger }, { sweep: false })).toEqual({
        interrupted: 0,
        repaired: 0,
        partialWrites: 1,
      });
      expect(await readdir(temporary)).toEqual([path.basename(fresh)]);
    } finally {
      await ctx.close();
    }
  });
});

async function duckdb(): Promise<{ ctx: TestContext; backend: Backend }> {
  const ctx = await createTestContext();
  const catalog = await openWarehouseCatalog(ctx.dataDir);
  const run = (sql: string) => catalog.run(sql);
  return {
    ctx,
    backend: {
      async addOrphanDataset(datasetId, tableIds) {
        const { dataset } = physicalNames({ datasetId });
        await run(`CREATE SCHEMA ${dataset}`);
        for (const tableId of tableIds)
          await run(`CREATE TABLE ${dataset}.${physicalNames({ datasetId, tableId }).table} (a INT)`);
      },
      async addOrphanTable(datasetId, tableId) {
        const { dataset, table } = physicalNames({ datasetId, tableId });
        await run(`CREATE TABLE ${dataset}.${table} (a INT)`);
      },
      dropDataset: (datasetId) => catalog.dropDataset(datasetId),
      async dropTable(datasetId, tableId) {
        const { dataset, table } = physicalNames({ datasetId, tableId });
        await run(`DROP TABLE ${dataset}.${table}`);
      },
      async columnsOf(datasetId, tableId) {
        return (await catalog.columnsOf(datasetId, tableId)).map((column) => column.name as string);
      },
      close: () => catalog.close(),
    },
  };
}

async function bigquery(): Promise<{ ctx: TestContext; backend: Backend }> {
  const PROJECT = 'collab-reconcile-test';
  const server: FakeBigQuery = await startFakeBigQuery(PROJECT);
  const ctx = await createTestContext({
    COLLAB_WAREHOUSE: 'bigquery',
    COLLAB_BIGQUERY_PROJECT: PROJECT,
    COLLAB_BIGQUERY_API_ENDPOINT: server.url,
    COLLAB_BIGQUERY_CREDENTIALS: 'none',
  });
  const addTable = (datasetId: string, tableId: string) => {
    const { dataset, table } = physicalNames({ datasetId, tableId });
    server.tables.set(`${dataset}.${table}`, {
      tableReference: { projectId: PROJECT, datasetId: dataset, tableId: table },
      schema: { fields: [{ name: 'a', type: 'INT64' }] },
      numRows: '0',
    });
  };
  return {
    ctx,
    backend: {
      addOrphanDataset(datasetId, tableIds) {
        const { dataset } = physicalNames({ datasetId });
        server.datasets.set(dataset, { datasetReference: { projectId: PROJECT, datasetId: dataset }, location: 'US' });
        for (const tableId of tableIds) addTable(datasetId, tableId);
      },
      addOrphanTable: addTable,
      dropDataset(datasetId) {
        const { dataset } = physicalNames({ datasetId });
        server.datasets.delete(dataset);
        for (const key of server.tables.keys()) if (key.startsWith(`${dataset}.`)) server.tables.delete(key);
      },
      dropTable(datasetId, tableId) {
        const { dataset, table } = physicalNames({ datasetId, tableId });
        server.tables.delete(`${dataset}.${table}`);
      },
      columnsOf(datasetId, tableId) {
        const { dataset, table } = physicalNames({ datasetId, tableId });
        return server.tables.get(`${dataset}.${table}`)?.schema.fields.map((field) => field.name) ?? [];
      },
      close: () => server.close(),
    },
  };
}
