import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';
import { openWarehouseCatalog, type WarehouseCatalog } from './warehouse-catalog.js';

let ctx: TestContext;
let acme: TenantFixture;
let catalog: WarehouseCatalog;
let datasetId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  catalog = await openWarehouseCatalog(ctx.dataDir);
  const project = (await user().post('/api/v1/projects', { name: 'Warehouse' }).expect(201)).body;
  datasetId = (await user().post('/api/v1/datasets', { name: 'Main', project_id: project.id }).expect(201)).body.id;
});
afterAll(async () => {
  await ctx.close();
  catalog.close();
});

const MISSING = '0195a6c1-0000-7000-8000-000000000000';
const user = () => as(ctx.app, acme.user.token);

const column = (name: string, type: string, extra: object = {}) => ({ name, type, mode: 'NULLABLE', private: false, ...extra });

async function newTable(name: string, schema: unknown = [{ name: 'id', type: 'INT64', mode: 'REQUIRED' }], dataset = datasetId) {
  const res = await user().post('/api/v1/tables', { name, schema, dataset_id: dataset });
  expect(res.status).toBe(201);
  return res.body;
}

describe('POST /api/v1/tables', () => {
  it('creates the table with its schema normalised, and in the warehouse', async () => {
    const res = await user().post('/api/v1/tables', {
      name: 'Orders',
      dataset_id: datasetId,
      schema: {
        fields: [
          { name: 'id', type: 'integer', mode: 'REQUIRED' },
          { name: 'email', type: 'STRING', private: true, description: 'Buyer' },
          { name: 'tags', type: 'string', mode: 'repeated' },
          { name: 'paid', type: 'BOOLEAN', mode: null, description: '' },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: acme.id,
      dataset_id: datasetId,
      name: 'Orders',
      schema: [
        column('id', 'INT64', { mode: 'REQUIRED' }),
        column('email', 'STRING', { private: true, description: 'Buyer' }),
        column('tags', 'STRING', { mode: 'REPEATED' }),
        column('paid', 'BOOL'),
      ],
      analysis_rule: null,
      created_at: expect.any(String),
      archived_at: null,
    });
    expect(await catalog.columnsOf(datasetId, res.body.id)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: false },
      { name: 'email', type: 'VARCHAR', nullable: true },
      { name: 'tags', type: 'VARCHAR[]', nullable: true },
      { name: 'paid', type: 'BOOLEAN', nullable: true },
    ]);
    expect((await user().get(`/api/v1/tables/${res.body.id}`)).body).toEqual(res.body);
  });

  it('answers 422 with loc paths inside the schema', async () => {
    const res = await user().post('/api/v1/tables', {
      name: 'Bad',
      dataset_id: datasetId,
      schema: [
        { name: 'ok', type: 'STRING' },
        { name: '1st', type: 'STRUCT' },
        { name: 'x', type: 'STRING', mode: 'SOMETIMES' },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([
      ['body', 'schema', 1, 'name'],
      ['body', 'schema', 1, 'type'],
      ['body', 'schema', 2, 'mode'],
    ]);
    const duplicate = await user().post('/api/v1/tables', {
      name: 'Bad',
      dataset_id: datasetId,
      schema: [
        { name: 'ok', type: 'STRING' },
        { name: 'OK', type: 'INT64' },
      ],
    });
    expect(duplicate.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'schema', 1, 'name'] })]);
    const wrapped = await user().post('/api/v1/tables', { name: 'Bad', dataset_id: datasetId, schema: { fields: [] } });
    expect(wrapped.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'schema', 'fields'] })]);
    const missing = await user().post('/api/v1/tables', { name: 'Bad', dataset_id: datasetId });
    expect(missing.body.detail).toEqual([{ loc: ['body', 'schema'], msg: 'Field required', type: 'missing' }]);
    expect(await ctx.db.table.count({ where: { name: 'Bad' } })).toBe(0);
  });

  it('answers 404 for a dataset that is not there, and 409 for a name the dataset has', async () => {
    const orphan = await user().post('/api/v1/tables', {
      name: 'Orphan',
      schema: [{ name: 'a', type: 'STRING' }],
      dataset_id: MISSING,
    });
    expect({ status: orphan.status, body: orphan.body }).toEqual({ status: 404, body: { detail: 'Dataset not found' } });
    await newTable('Twice');
    const again = await user().post('/api/v1/tables', {
      name: 'twice',
      schema: [{ name: 'a', type: 'STRING' }],
      dataset_id: datasetId,
    });
    expect({ status: again.status, body: again.body }).toEqual({
      status: 409,
      body: { detail: 'The dataset already has a table named "twice"' },
    });
  });
});

describe('GET /api/v1/tables and /api/v1/datasets/{dataset_id}/tables', () => {
  it('list live tables oldest first, with skip and limit', async () => {
    const project = (await user().post('/api/v1/projects', { name: 'Listing' }).expect(201)).body;
    const other = (await user().post('/api/v1/datasets', { name: 'Listing', project_id: project.id }).expect(201)).body.id;
    const [a, b, c] = [
      await newTable('a', undefined, other),
      await newTable('b', undefined, other),
      await newTable('c', undefined, other),
    ];
    await user().delete(`/api/v1/tables/${b.id}`).expect(204);
    const ids = (body: { tables: { id: string }[] }) => body.tables.map((t) => t.id);
    expect(ids((await user().get(`/api/v1/datasets/${other}/tables`)).body)).toEqual([a.id, c.id]);
    expect(ids((await user().get(`/api/v1/datasets/${other}/tables?skip=1&limit=1`)).body)).toEqual([c.id]);
    const all = ids((await user().get('/api/v1/tables?limit=1000')).body);
    expect(all).toEqual(expect.arrayContaining([a.id, c.id]));
    expect(all).not.toContain(b.id);
    expect((await user().get(`/api/v1/datasets/${MISSING}/tables`)).status).toBe(404);
    expect((await user().get('/api/v1/tables?skip=-1')).body.detail).toEqual([
      { loc: ['query', 'skip'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' },
    ]);
  });
});

describe('PATCH /api/v1/tables/{table_id}', () => {
  it('renames the table without touching its warehouse name', async () => {
    const table = await newTable('Old name');
    const res = await user().patch(`/api/v1/tables/${table.id}`, { name: 'New name', schema: null, dataset_id: null });
    expect(res.body).toEqual({ ...table, name: 'New name' });
    expect(await catalog.tablesOf(datasetId)).toContain(`t_${table.id.replaceAll('-', '_')}`);
  });

  it('adds columns and relaxes REQUIRED on a table with rows', async () => {
    const table = await newTable('Growing', [{ name: 'id', type: 'INT64', mode: 'REQUIRED' }]);
    await catalog.insert(datasetId, table.id, '(1), (2)');
    const schema = [
      { name: 'id', type: 'INT64' },
      { name: 'note', type: 'STRING', description: 'Added later' },
    ];
    const res = await user().patch(`/api/v1/tables/${table.id}`, { schema });
    expect(res.status).toBe(200);
    expect(res.body.schema).toEqual([column('id', 'INT64'), column('note', 'STRING', { description: 'Added later' })]);
    expect(await catalog.columnsOf(datasetId, table.id)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true },
      { name: 'note', type: 'VARCHAR', nullable: true },
    ]);
  });

  it('answers 409 with the reasons for a change the rows cannot take, and changes nothing', async () => {
    const table = await newTable('Full', [
      { name: 'id', type: 'INT64' },
      { name: 'amount', type: 'NUMERIC' },
    ]);
    await catalog.insert(datasetId, table.id, '(1, 9.5)');
    const res = await user().patch(`/api/v1/tables/${table.id}`, {
      name: 'Renamed too',
      schema: [{ name: 'id', type: 'STRING' }],
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(
      /^The table has rows, so its schema cannot change this way: .*column "amount" would be dropped/,
    );
    expect(res.body.detail).toContain('column "id" would change type from INT64 to STRING');
    expect((await user().get(`/api/v1/tables/${table.id}`)).body).toEqual(table);
    expect(await catalog.columnsOf(datasetId, table.id)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true },
      { name: 'amount', type: 'DECIMAL(38,9)', nullable: true },
    ]);
  });

  it('takes any change on an empty table', async () => {
    const table = await newTable('Empty', [{ name: 'id', type: 'INT64' }]);
    const res = await user().patch(`/api/v1/tables/${table.id}`, {
      schema: [{ name: 'code', type: 'STRING', mode: 'REQUIRED' }],
    });
    expect(res.status).toBe(200);
    expect(await catalog.columnsOf(datasetId, table.id)).toEqual([{ name: 'code', type: 'VARCHAR', nullable: false }]);
  });

  it('moves an empty table to another dataset, and refuses to move one with rows (409)', async () => {
    const project = (await user().post('/api/v1/projects', { name: 'Moves' }).expect(201)).body;
    const target = (await user().post('/api/v1/datasets', { name: 'Target', project_id: project.id }).expect(201)).body.id;
    const empty = await newTable('Mover');
    const moved = await user().patch(`/api/v1/tables/${empty.id}`, { dataset_id: target });
    expect(moved.body).toEqual({ ...empty, dataset_id: target });
    const physical = `t_${empty.id.replaceAll('-', '_')}`;
    expect(await catalog.tablesOf(target)).toEqual([physical]);
    expect(await catalog.tablesOf(datasetId)).not.toContain(physical);

    const full = await newTable('Stayer');
    await catalog.insert(datasetId, full.id, '(1)');
    const refused = await user().patch(`/api/v1/tables/${full.id}`, { dataset_id: target });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^The table has rows, so it cannot move to another dataset/);
    expect((await user().get(`/api/v1/tables/${full.id}`)).body.dataset_id).toBe(datasetId);
    expect((await user().patch(`/api/v1/tables/${full.id}`, { dataset_id: MISSING })).status).toBe(404);
  });
});

describe('DELETE /api/v1/tables/{table_id}', () => {
  it('answers 204, archives the table and its jobs, and drops it from the warehouse', async () => {
    const table = await newTable('Doomed');
    const job = (await user().post('/api/v1/import-jobs', { status: 'queued', table_id: table.id }).expect(201)).body;
    expect((await user().delete(`/api/v1/tables/${table.id}`)).status).toBe(204);
    expect((await user().get(`/api/v1/tables/${table.id}`)).status).toBe(404);
    expect((await user().get(`/api/v1/import-jobs/${job.id}`)).status).toBe(404);
    expect(await catalog.tablesOf(datasetId)).not.toContain(`t_${table.id.replaceAll('-', '_')}`);
    expect((await user().delete(`/api/v1/tables/${table.id}`)).status).toBe(404);
    await newTable('Doomed');
  });
});
