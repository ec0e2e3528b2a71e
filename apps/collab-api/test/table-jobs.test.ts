import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
let tableId: string;
let otherTableId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  const project = (await user().post('/api/v1/projects', { name: 'Jobs' }).expect(201)).body;
  const dataset = (await user().post('/api/v1/datasets', { name: 'Jobs', project_id: project.id }).expect(201)).body;
  const newTable = async (name: string) =>
    (
      await user()
        .post('/api/v1/tables', { name, schema: [{ name: 'id', type: 'INT64' }], dataset_id: dataset.id })
        .expect(201)
    ).body.id;
  tableId = await newTable('First');
  otherTableId = await newTable('Second');
});
afterAll(() => ctx.close());

const MISSING = '0195a6c1-0000-7000-8000-000000000000';
const user = () => as(ctx.app, acme.user.token);

describe.each([
  ['import-jobs', 'import_jobs'],
  ['export-jobs', 'export_jobs'],
])('/api/v1/%s', (path, listKey) => {
  it('creates a job for a table, gets it and lists it, oldest first', async () => {
    const res = await user().post(`/api/v1/${path}`, { status: 'queued', table_id: tableId });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: acme.id,
      table_id: tableId,
      status: 'queued',
      created_at: expect.any(String),
      archived_at: null,
    });
    expect((await user().get(`/api/v1/${path}/${res.body.id}`)).body).toEqual(res.body);
    const second = (await user().post(`/api/v1/${path}`, { status: 'done', table_id: otherTableId }).expect(201)).body;
    const third = (await user().post(`/api/v1/${path}`, { status: 'running', table_id: tableId }).expect(201)).body;

    expect((await user().get(`/api/v1/${path}`)).body).toEqual({ [listKey]: [res.body, second, third] });
    expect((await user().get(`/api/v1/${path}?skip=1&limit=1`)).body).toEqual({ [listKey]: [second] });
    expect((await user().get(`/api/v1/tables/${tableId}/${path}`)).body).toEqual({ [listKey]: [res.body, third] });
    expect((await user().get(`/api/v1/tables/${tableId}/${path}?skip=1`)).body).toEqual({ [listKey]: [third] });
  });

  it('answers 404 for an unknown table or job, and 422 for invalid input', async () => {
    expect((await user().post(`/api/v1/${path}`, { status: 'queued', table_id: MISSING })).body).toEqual({
      detail: 'Table not found',
    });
    expect((await user().get(`/api/v1/${path}/${MISSING}`)).body).toEqual({ detail: 'Job not found' });
    expect((await user().get(`/api/v1/tables/${MISSING}/${path}`)).status).toBe(404);
    const res = await user().post(`/api/v1/${path}`, { table_id: 'x' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ['body', 'status'], msg: 'Field required', type: 'missing' },
      expect.objectContaining({ loc: ['body', 'table_id'], type: 'uuid_parsing' }),
    ]);
    expect((await user().get(`/api/v1/${path}/nope`)).body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'job_id'] }),
    ]);
  });
});

it('keeps import and export jobs apart', async () => {
  const imported = (await user().post('/api/v1/import-jobs', { status: 'queued', table_id: tableId }).expect(201)).body;
  expect((await user().get(`/api/v1/export-jobs/${imported.id}`)).status).toBe(404);
  expect(
    (await user().get('/api/v1/export-jobs?limit=1000')).body.export_jobs.map((job: { id: string }) => job.id),
  ).not.toContain(imported.id);
});
