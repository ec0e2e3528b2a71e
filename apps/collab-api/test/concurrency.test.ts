/**
 * Parents and children stay consistent under concurrent requests: a child is never left live
 * under an archived parent, whichever of the two transactions starts first. Each case holds one
 * transaction open inside its warehouse call (the app's DuckDB warehouse, held back by a gate),
 * starts the other, and lets the first go once the second is seen waiting for its lock.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, NotFoundError } from '@repo/errors';
import type { Actor } from '../src/access/index.js';
import type { Warehouse } from '../src/adapters/warehouse/index.js';
import { createDataset, archiveDataset } from '../src/datasets/service.js';
import { createProject, archiveProject } from '../src/projects/service.js';
import { createJob } from '../src/table-jobs/service.js';
import { createTableBody } from '../src/tables/schemas.js';
import { archiveTable, createTable } from '../src/tables/service.js';
import { createTestContext, type TestContext } from './context.js';
import { seedTenant } from './fixtures.js';

let ctx: TestContext;
let editor: Actor;
beforeAll(async () => {
  ctx = await createTestContext();
  const acme = await seedTenant(ctx, 'Acme');
  editor = { userId: acme.editor.id, tenantId: acme.id, role: acme.editor.role };
});
afterAll(() => ctx.close());

/** The app's warehouse with `method` held at its start until `release()`, and `reached` once called. */
function holdWarehouse(method: keyof Warehouse) {
  const real = ctx.deps.warehouse;
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const warehouse = new Proxy(real, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        entered();
        await gate;
        return value.apply(target, args);
      };
    },
  });
  return { deps: { db: ctx.db, warehouse }, reached, release };
}

/** Resolves once some session of the test database waits for a row lock; fails after 10 s. */
async function someoneWaitsForALock(): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const [row] = await ctx.db.$queryRaw<{ waiting: number }[]>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row && row.waiting > 0) return;
    await sleep(10);
  }
  throw new Error('No transaction waited for a lock: the second one ran straight through');
}

const plainDeps = () => ({ db: ctx.db, warehouse: ctx.deps.warehouse });
const newProject = () => createProject(ctx.db, editor, { name: 'Concurrent' });
const newDataset = (projectId: string) => createDataset(plainDeps(), editor, { name: 'ds', project_id: projectId });
const tableInput = (datasetId: string) =>
  createTableBody.parse({ name: 't', dataset_id: datasetId, schema: [{ name: 'id', type: 'INT64' }] });

describe('a project deleted while a dataset is being created in it', () => {
  it('waits for the dataset, then refuses with 409 because the project is not empty', async () => {
    const project = await newProject();
    const held = holdWarehouse('createDataset');
    const creating = createDataset(held.deps, editor, { name: 'late', project_id: project.id });
    await held.reached;

    const deleting = archiveProject(ctx.db, editor, project.id);
    await someoneWaitsForALock();
    held.release();

    expect((await creating).project_id).toBe(project.id);
    await expect(deleting).rejects.toThrow(ConflictError);
    expect(await ctx.db.project.findUniqueOrThrow({ where: { id: project.id } })).toMatchObject({ archivedAt: null });
  });
});

describe('a table created while its dataset is being deleted', () => {
  it('waits for the delete, then answers 404, leaving no table', async () => {
    const dataset = await newDataset((await newProject()).id);
    const held = holdWarehouse('deleteDataset');
    const deleting = archiveDataset(held.deps, editor, dataset.id);
    await held.reached;

    const creating = createTable(plainDeps(), editor, tableInput(dataset.id));
    await someoneWaitsForALock();
    held.release();

    await deleting;
    await expect(creating).rejects.toThrow(NotFoundError);
    expect(await ctx.db.table.count({ where: { datasetId: dataset.id } })).toBe(0);
  });

  it('is archived with the dataset when its creation started first', async () => {
    const dataset = await newDataset((await newProject()).id);
    const held = holdWarehouse('createTable');
    const creating = createTable(held.deps, editor, tableInput(dataset.id));
    await held.reached;

    const deleting = archiveDataset(plainDeps(), editor, dataset.id);
    await someoneWaitsForALock();
    held.release();

    const table = await creating;
    await deleting;
    expect(await ctx.db.table.findUniqueOrThrow({ where: { id: table.id } })).toMatchObject({ archivedAt: expect.any(Date) });
  });
});

describe('a job created while its table is being deleted', () => {
  it('waits for the delete, then answers 404, leaving no job', async () => {
    const dataset = await newDataset((await newProject()).id);
    const table = await createTable(plainDeps(), editor, tableInput(dataset.id));
    const held = holdWarehouse('deleteTable');
    const deleting = archiveTable(held.deps, editor, table.id);
    await held.reached;

    const creating = createJob(ctx.db, editor, 'import', { status: 'pending', table_id: table.id });
    await someoneWaitsForALock();
    held.release();

    await deleting;
    await expect(creating).rejects.toThrow(NotFoundError);
    expect(await ctx.db.tableJob.count({ where: { tableId: table.id } })).toBe(0);
  });
});
