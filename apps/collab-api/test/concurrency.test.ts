/**
 * Records and the warehouse stay consistent under concurrent requests, on Postgres and DuckDB.
 *
 * The first cases hold one change inside its warehouse call (the app's DuckDB warehouse, held
 * back by a gate), start another that depends on it, and check that the second waits its turn
 * and then sees the first's outcome, while no transaction is open. The others send real parallel
 * requests and check that every answer is one the API documents and that the records and the
 * warehouse agree afterwards.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, NotFoundError } from '@repo/errors';
import type { Response } from 'supertest';
import type { Actor } from '../src/access/index.js';
import type { Warehouse } from '../src/adapters/warehouse/index.js';
import { createDataset, archiveDataset, updateDataset } from '../src/datasets/service.js';
import { changeDeps } from '../src/deps.js';
import { createProject, archiveProject } from '../src/projects/service.js';
import { createJob } from '../src/table-jobs/service.js';
import { createTableBody } from '../src/tables/schemas.js';
import { archiveTable, createTable } from '../src/tables/service.js';
import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';
import { openWarehouseCatalog, type WarehouseCatalog } from './warehouse-catalog.js';

let ctx: TestContext;
let acme: TenantFixture;
let editor: Actor;
let catalog: WarehouseCatalog;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  editor = { userId: acme.editor.id, tenantId: acme.id, role: acme.editor.role };
  catalog = await openWarehouseCatalog(ctx.dataDir);
});
afterAll(async () => {
  catalog.close();
  await ctx.close();
});

/** `target` itself, but each call of its `method` awaits `before()` first. */
function beforeCalls<T extends object>(target: T, method: PropertyKey, before: () => void | Promise<void>): T {
  return new Proxy(target, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        await before();
        return value.apply(target, args);
      };
    },
  });
}

/** The app's warehouse with `method` held at its start until `release()`, and `reached` once called. */
function holdWarehouse(method: keyof Warehouse) {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const warehouse = beforeCalls(ctx.deps.warehouse, method, () => {
    entered();
    return gate;
  });
  return { deps: { ...plainDeps(), warehouse }, reached, release };
}

/**
 * The test database, counting the transactions begun through it. A change that finds another
 * under way (inTurn) gives its transaction up and begins another after a pause: a second one
 * begun while the first change is held shows that it is waiting its turn.
 */
function watchedDb() {
  let begun = 0;
  const db = beforeCalls(ctx.db, '$transaction', () => {
    begun += 1;
  });
  return { db, deps: { ...plainDeps(), db }, begun: () => begun };
}

/** Whether the change started on `watched` waits its turn: it tries again, unsettled, until the held one is released. */
async function waitsItsTurn(watched: { begun: () => number }, change: Promise<unknown>): Promise<boolean> {
  let settled = false;
  change.then(
    () => (settled = true),
    () => (settled = true),
  );
  const deadline = Date.now() + 10_000;
  while (watched.begun() < 2 && !settled && Date.now() < deadline) await sleep(5);
  return watched.begun() >= 2 && !settled;
}

/** Sessions of the test database inside a transaction, besides the one asking. */
async function openTransactions(): Promise<number> {
  const [row] = await ctx.db.$queryRaw<{ open: number }[]>`
    SELECT count(*)::int AS open FROM pg_stat_activity
     WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`;
  return row!.open;
}

const plainDeps = () => changeDeps(ctx.deps);
const newProject = () => createProject(ctx.db, editor, { name: 'Concurrent' });
const newDataset = (projectId: string) => createDataset(plainDeps(), editor, { name: 'ds', project_id: projectId });
const tableInput = (datasetId: string, name = 't') =>
  createTableBody.parse({ name, dataset_id: datasetId, schema: [{ name: 'id', type: 'INT64' }] });

describe('a change that depends on one under way', () => {
  it('holds no transaction while the warehouse works', async () => {
    const dataset = await newDataset((await newProject()).id);
    const held = holdWarehouse('createTable');
    const creating = createTable(held.deps, editor, tableInput(dataset.id));
    await held.reached;
    expect(await openTransactions()).toBe(0);
    held.release();
    await creating;
  });

  it('a project deleted while a dataset is being created in it: waits, then 409 because the project is not empty', async () => {
    const project = await newProject();
    const held = holdWarehouse('createDataset');
    const creating = createDataset(held.deps, editor, { name: 'late', project_id: project.id });
    await held.reached;

    const watched = watchedDb();
    const deleting = archiveProject(watched.db, editor, project.id);
    expect(await waitsItsTurn(watched, deleting)).toBe(true);
    held.release();

    expect((await creating).project_id).toBe(project.id);
    await expect(deleting).rejects.toThrow(ConflictError);
    expect(await ctx.db.project.findUniqueOrThrow({ where: { id: project.id } })).toMatchObject({ archivedAt: null });
  });

  it('a table created while its dataset is being deleted: waits for the delete, then 404, leaving no table', async () => {
    const dataset = await newDataset((await newProject()).id);
    const held = holdWarehouse('deleteDataset');
    const deleting = archiveDataset(held.deps, editor, dataset.id);
    await held.reached;

    const watched = watchedDb();
    const creating = createTable(watched.deps, editor, tableInput(dataset.id));
    expect(await waitsItsTurn(watched, creating)).toBe(true);
    held.release();

    await deleting;
    await expect(creating).rejects.toThrow(NotFoundError);
    expect(await ctx.db.table.count({ where: { datasetId: dataset.id } })).toBe(0);
    expect(await catalog.datasetExists(dataset.id)).toBe(false);
  });

  it('a dataset deleted while a table is being created in it: waits for the table, then archives it with the dataset', async () => {
    const dataset = await newDataset((await newProject()).id);
    const held = holdWarehouse('createTable');
    const creating = createTable(held.deps, editor, tableInput(dataset.id));
    await held.reached;

    const watched = watchedDb();
    const deleting = archiveDataset(watched.deps, editor, dataset.id);
    expect(await waitsItsTurn(watched, deleting)).toBe(true);
    held.release();

    const table = await creating;
    await deleting;
    expect(await ctx.db.table.findUniqueOrThrow({ where: { id: table.id } })).toMatchObject({ archivedAt: expect.any(Date) });
    expect(await catalog.datasetExists(dataset.id)).toBe(false);
  });

  it('a job created while its table is being deleted: waits for the delete, then 404, leaving no job', async () => {
    const dataset = await newDataset((await newProject()).id);
    const table = await createTable(plainDeps(), editor, tableInput(dataset.id));
    const held = holdWarehouse('deleteTable');
    const deleting = archiveTable(held.deps, editor, table.id);
    await held.reached;

    const watched = watchedDb();
    const creating = createJob(watched.db, editor, 'import', { status: 'pending', table_id: table.id });
    expect(await waitsItsTurn(watched, creating)).toBe(true);
    held.release();

    await deleting;
    await expect(creating).rejects.toThrow(NotFoundError);
    expect(await ctx.db.tableJob.count({ where: { tableId: table.id } })).toBe(0);
  });

  it('a name freed by a rename under way is not taken until the rename ends: undone, the rename gets it back', async () => {
    const project = await newProject();
    const dataset = await createDataset(plainDeps(), editor, { name: 'Before', project_id: project.id });
    const held = holdWarehouse('updateDataset');
    const renaming = updateDataset(held.deps, editor, dataset.id, { name: 'After' });
    await held.reached;

    const watched = watchedDb();
    const taking = createDataset(watched.deps, editor, { name: 'before', project_id: project.id });
    expect(await waitsItsTurn(watched, taking)).toBe(true);
    // The warehouse refuses the rename: its dataset is gone from under it.
    await catalog.dropDataset(dataset.id);
    held.release();

    await expect(renaming).rejects.toMatchObject({ status: 502, message: 'Warehouse error: the dataset does not exist' });
    await expect(taking).rejects.toThrow('The project already has a dataset named "before"');
    expect(await ctx.db.dataset.findUniqueOrThrow({ where: { id: dataset.id } })).toMatchObject({
      name: 'Before',
      liveName: 'before',
    });
  });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// A warehouse's own name for a dataset or table (see physicalNames): never in an answer.
const PHYSICAL_NAME = /\b(ds|t)_[0-9a-f]{8}_[0-9a-f]{4}_/;

describe('parallel requests', () => {
  const api = () => as(ctx.app, acme.editor.token);
  let projectId: string;
  let datasetId: string;
  beforeAll(async () => {
    projectId = (await api().post('/api/v1/projects', { name: 'Races' }).expect(201)).body.id;
    datasetId = (await api().post('/api/v1/datasets', { name: 'Races', project_id: projectId }).expect(201)).body.id;
  });

  const statuses = (responses: Response[]) => responses.map((res) => res.status);

  function expectNoPhysicalNames(responses: Response[]): void {
    for (const res of responses) expect(JSON.stringify(res.body ?? '')).not.toMatch(PHYSICAL_NAME);
  }

  async function newTable(name: string, schema: object[] = [{ name: 'a', type: 'STRING' }]) {
    return (await api().post('/api/v1/tables', { name, schema, dataset_id: datasetId }).expect(201)).body as {
      id: string;
      schema: { name: string; mode: string }[];
    };
  }

  /** The stored columns of the table and the warehouse's, which must be the same. */
  async function expectSameColumns(tableId: string): Promise<string[]> {
    const stored = (await api().get(`/api/v1/tables/${tableId}`).expect(200)).body.schema.map(
      (field: { name: string }) => field.name,
    );
    const warehouse = (await catalog.columnsOf(datasetId, tableId)).map((column) => column.name);
    expect(warehouse).toEqual(stored);
    return stored;
  }

  it('ten PATCHes adding a column each, at once: one after another, all 200, and the records and DuckDB agree', async () => {
    const table = await newTable('Ten columns');
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api().patch(`/api/v1/tables/${table.id}`, {
          schema: [
            { name: 'a', type: 'STRING' },
            { name: `c${i}`, type: 'STRING' },
          ],
        }),
      ),
    );
    expect(statuses(responses)).toEqual(Array(10).fill(200));
    const columns = await expectSameColumns(table.id);
    expect(columns).toHaveLength(2);
    // The last one served is what the table has.
    const last = responses.map((res) => res.body.schema[1].name as string);
    expect(last).toContain(columns[1]);

    const later = await api().patch(`/api/v1/tables/${table.id}`, {
      schema: [...columns.map((name) => ({ name, type: 'STRING' })), { name: 'later', type: 'STRING' }],
    });
    expect(later.status).toBe(200);
    expect(await expectSameColumns(table.id)).toEqual([...columns, 'later']);
  });

  it('on a table with rows, parallel column lists that drop each other: one 200, the others 409, and they agree', async () => {
    const table = await newTable('With rows');
    await catalog.insert(datasetId, table.id, "('x')");
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api().patch(`/api/v1/tables/${table.id}`, {
          schema: [
            { name: 'a', type: 'STRING' },
            { name: `c${i}`, type: 'STRING' },
          ],
        }),
      ),
    );
    expect(statuses(responses).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const res of responses.filter((r) => r.status === 409)) expect(res.body.detail).toMatch(/would be dropped/);
    expect(await expectSameColumns(table.id)).toHaveLength(2);
  });

  it('renames racing an added column: all 200, both applied, no 502', async () => {
    const table = await newTable('Rename me');
    const schema = [
      { name: 'a', type: 'STRING' },
      { name: 'b', type: 'INT64' },
    ];
    const responses = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => api().patch(`/api/v1/tables/${table.id}`, { name: `Renamed ${i}` })),
      ...Array.from({ length: 4 }, () => api().patch(`/api/v1/tables/${table.id}`, { schema })),
    ]);
    expect(statuses(responses)).toEqual(Array(8).fill(200));
    const final = (await api().get(`/api/v1/tables/${table.id}`)).body;
    expect(final.name).toMatch(/^Renamed \d$/);
    expect(await expectSameColumns(table.id)).toEqual(['a', 'b']);
  });

  it('a table renamed while it is deleted: 204 and 200 or 404, never 5xx; both names free afterwards', async () => {
    for (let round = 0; round < 4; round++) {
      const table = await newTable(`Doomed ${round}`);
      const responses = await Promise.all([
        api().patch(`/api/v1/tables/${table.id}`, { name: `Saved ${round}` }),
        api().delete(`/api/v1/tables/${table.id}`),
      ]);
      const [rename, deletion] = responses;
      expect(deletion.status).toBe(204);
      expect([200, 404]).toContain(rename.status);
      if (rename.status === 404) expect(rename.body).toEqual({ detail: 'Table not found' });
      expectNoPhysicalNames(responses);
      expect((await api().get(`/api/v1/tables/${table.id}`)).status).toBe(404);
      expect(await ctx.db.table.findUniqueOrThrow({ where: { id: table.id } })).toMatchObject({ liveName: null });
      await newTable(`Doomed ${round}`);
      await newTable(`Saved ${round}`);
    }
  });

  it('a dataset renamed while it is deleted: 204 and 200 or 404, never 5xx; both names free afterwards', async () => {
    for (let round = 0; round < 4; round++) {
      const dataset = (
        await api()
          .post('/api/v1/datasets', { name: `Doomed ${round}`, project_id: projectId })
          .expect(201)
      ).body;
      const responses = await Promise.all([
        api().patch(`/api/v1/datasets/${dataset.id}`, { name: `Saved ${round}`, description: 'Renamed' }),
        api().delete(`/api/v1/datasets/${dataset.id}`),
      ]);
      const [rename, deletion] = responses;
      expect(deletion.status).toBe(204);
      expect([200, 404]).toContain(rename.status);
      if (rename.status === 404) expect(rename.body).toEqual({ detail: 'Dataset not found' });
      expectNoPhysicalNames(responses);
      expect(await catalog.datasetExists(dataset.id)).toBe(false);
      for (const name of [`Doomed ${round}`, `Saved ${round}`]) {
        await api().post('/api/v1/datasets', { name, project_id: projectId }).expect(201);
      }
    }
  });

  it('a project updated while it is deleted: 200 with a live project or 404, never an archived one', async () => {
    for (let round = 0; round < 4; round++) {
      const project = (
        await api()
          .post('/api/v1/projects', { name: `Doomed ${round}` })
          .expect(201)
      ).body;
      const [update, deletion] = await Promise.all([
        api().patch(`/api/v1/projects/${project.id}`, { name: 'Saved', description: 'x' }),
        api().delete(`/api/v1/projects/${project.id}`),
      ]);
      expect(deletion.status).toBe(204);
      expect([200, 404]).toContain(update.status);
      if (update.status === 200) expect(update.body).toMatchObject({ id: project.id, archived_at: null });
    }
  });

  it('parallel creates of one name: one 201, the others 409, and one object in the warehouse', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        api().post('/api/v1/tables', { name: 'Once', schema: [{ name: 'a', type: 'STRING' }], dataset_id: datasetId }),
      ),
    );
    expect(statuses(responses).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const created = responses.find((res) => res.status === 201)!.body;
    expect(created.id).toMatch(UUID);
    const tables = await catalog.tablesOf(datasetId);
    const live = await ctx.db.table.findMany({ where: { datasetId, archivedAt: null }, select: { id: true } });
    expect(tables.sort()).toEqual(live.map(({ id }) => `t_${id.replaceAll('-', '_')}`).sort());
  });
});
