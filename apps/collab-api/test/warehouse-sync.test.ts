/**
 * The database and the warehouse never diverge: with the real BigQuery adapter talking to a
 * loopback server that speaks BigQuery's REST API (test/warehouse/fake-bigquery.ts), a failing
 * warehouse call answers 502 with BigQuery's reason, and the records say what the warehouse has:
 * a refused create leaves its record archived, a refused update or delete leaves it as it was.
 */
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';
import { type FakeBigQuery, startFakeBigQuery } from './warehouse/fake-bigquery.js';

const PROJECT = 'collab-sync-test';
let bigquery: FakeBigQuery;
let ctx: TestContext;
let acme: TenantFixture;
let projectId: string;
beforeAll(async () => {
  bigquery = await startFakeBigQuery(PROJECT);
  ctx = await createTestContext({
    COLLAB_WAREHOUSE: 'bigquery',
    COLLAB_BIGQUERY_PROJECT: PROJECT,
    COLLAB_BIGQUERY_API_ENDPOINT: bigquery.url,
    COLLAB_BIGQUERY_CREDENTIALS: 'none',
  });
  acme = await seedTenant(ctx, 'Acme');
  projectId = (await editor().post('/api/v1/projects', { name: 'Sync' }).expect(201)).body.id;
});
afterAll(async () => {
  await ctx.close();
  await bigquery.close();
});

const editor = () => as(ctx.app, acme.editor.token);
const DENIED = 'Access Denied: Permission denied by the test';
const denyNextCall = () => bigquery.failNext(403, 'accessDenied', DENIED);

async function newDataset(name: string) {
  return (await editor().post('/api/v1/datasets', { name, project_id: projectId }).expect(201)).body;
}

async function newTable(datasetId: string, name: string) {
  const schema = [{ name: 'id', type: 'INT64', mode: 'REQUIRED' }];
  return (await editor().post('/api/v1/tables', { name, schema, dataset_id: datasetId }).expect(201)).body;
}

function bigQueryTable(datasetId: string, tableId: string) {
  const { dataset, table } = physicalNames({ datasetId, tableId });
  return bigquery.tables.get(`${dataset}.${table}`);
}

describe('datasets', () => {
  it('are created, renamed and deleted in BigQuery', async () => {
    const dataset = await newDataset('Mirrored');
    const { dataset: name } = physicalNames({ datasetId: dataset.id });
    expect(bigquery.datasets.get(name)).toMatchObject({ friendlyName: 'Mirrored' });
    await editor().patch(`/api/v1/datasets/${dataset.id}`, { name: 'Renamed', description: 'Now described' }).expect(200);
    expect(bigquery.datasets.get(name)).toMatchObject({ friendlyName: 'Renamed', description: 'Now described' });
    await editor().delete(`/api/v1/datasets/${dataset.id}`).expect(204);
    expect(bigquery.datasets.has(name)).toBe(false);
  });

  it('are not created when BigQuery fails', async () => {
    denyNextCall();
    const res = await editor().post('/api/v1/datasets', { name: 'Refused', project_id: projectId });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 502,
      body: { detail: `BigQuery could not create the dataset: ${DENIED} (accessDenied)` },
    });
    expect(await ctx.db.dataset.findMany({ where: { name: 'Refused' } })).toEqual([
      expect.objectContaining({ archivedAt: expect.any(Date), liveName: null }),
    ]);
    expect(await ctx.db.warehouseChange.count()).toBe(0);
    // The name is free: nothing holds it.
    await newDataset('Refused');
  });

  it('keep their name when BigQuery fails to rename them', async () => {
    const dataset = await newDataset('Stays');
    denyNextCall();
    expect((await editor().patch(`/api/v1/datasets/${dataset.id}`, { name: 'Never' })).status).toBe(502);
    expect(await ctx.db.dataset.findUniqueOrThrow({ where: { id: dataset.id } })).toMatchObject({
      name: 'Stays',
      liveName: 'stays',
    });
  });

  it('stay, with their tables, when BigQuery fails to delete them', async () => {
    const dataset = await newDataset('Survivor');
    const table = await newTable(dataset.id, 'Kept');
    denyNextCall();
    expect((await editor().delete(`/api/v1/datasets/${dataset.id}`)).status).toBe(502);
    expect(await ctx.db.dataset.findUniqueOrThrow({ where: { id: dataset.id } })).toMatchObject({ archivedAt: null });
    expect(await ctx.db.table.findUniqueOrThrow({ where: { id: table.id } })).toMatchObject({
      archivedAt: null,
      liveName: 'kept',
    });
    expect((await editor().get(`/api/v1/datasets/${dataset.id}/tables`)).body.tables).toHaveLength(1);
  });
});

describe('tables', () => {
  let datasetId: string;
  beforeAll(async () => {
    datasetId = (await newDataset('Tables')).id;
  });

  it('are not created when BigQuery fails', async () => {
    denyNextCall();
    const res = await editor().post('/api/v1/tables', {
      name: 'Refused',
      schema: [{ name: 'a', type: 'STRING' }],
      dataset_id: datasetId,
    });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 502,
      body: { detail: `BigQuery could not create the table: ${DENIED} (accessDenied)` },
    });
    expect(await ctx.db.table.count({ where: { name: 'Refused', archivedAt: null } })).toBe(0);
    expect(
      (await editor().get(`/api/v1/datasets/${datasetId}/tables`)).body.tables.map((t: { name: string }) => t.name),
    ).not.toContain('Refused');
  });

  it('keep their name and schema when BigQuery fails to alter them', async () => {
    const table = await newTable(datasetId, 'Unaltered');
    const schema = [
      { name: 'id', type: 'INT64' },
      { name: 'note', type: 'STRING' },
    ];
    // A rename is one tables.patch; a schema change reads the table (its rows) first, then patches it.
    for (const change of [{ name: 'Renamed' }, { schema }, { name: 'Renamed', schema }]) {
      denyNextCall();
      expect((await editor().patch(`/api/v1/tables/${table.id}`, change)).status).toBe(502);
    }
    expect((await editor().get(`/api/v1/tables/${table.id}`)).body).toEqual(table);
    expect(bigQueryTable(datasetId, table.id)).toMatchObject({
      friendlyName: 'Unaltered',
      schema: { fields: [{ name: 'id', type: 'INT64', mode: 'REQUIRED' }] },
    });
  });

  it('stay when BigQuery fails to delete them', async () => {
    const table = await newTable(datasetId, 'Undeleted');
    denyNextCall();
    expect((await editor().delete(`/api/v1/tables/${table.id}`)).status).toBe(502);
    expect((await editor().get(`/api/v1/tables/${table.id}`)).body).toEqual(table);
    expect(bigQueryTable(datasetId, table.id)).toBeDefined();
  });

  it('answer 409 for a change their rows cannot take', async () => {
    const table = await newTable(datasetId, 'With rows');
    bigQueryTable(datasetId, table.id)!.numRows = '12';
    const res = await editor().patch(`/api/v1/tables/${table.id}`, { schema: [{ name: 'id', type: 'STRING' }] });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('column "id" would change type from INT64 to STRING');
    expect((await editor().get(`/api/v1/tables/${table.id}`)).body).toEqual(table);
  });
});
