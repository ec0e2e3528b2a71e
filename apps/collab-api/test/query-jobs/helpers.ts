import avsc from 'avsc';
import request from 'supertest';
import { physicalNames } from '../../src/adapters/warehouse/index.js';
import { as, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';
import { bigLong } from '../../src/adapters/warehouse/avro-long.js';

export interface Column {
  name: string;
  type: string;
  mode?: string;
  private?: boolean;
}

/** A tenant with a project and a dataset (named `dataset`), tables made through the API and rows written into DuckDB. */
/** The orders table the export tests read back in every format: one column of each kind a file format treats apart. */
export const ORDER_COLUMNS: Column[] = [
  { name: 'id', type: 'INT64' },
  { name: 'label', type: 'STRING' },
  { name: 'amount', type: 'FLOAT64' },
  { name: 'ok', type: 'BOOL' },
];

export async function queryFixture(ctx: TestContext, name = 'Queries', datasetName = 'sales') {
  const tenant = await seedTenant(ctx, name);
  const api = as(ctx.app, tenant.editor.token);
  const project = (await api.post('/api/v1/projects', { name })).body.id as string;
  const dataset = (await api.post('/api/v1/datasets', { name: datasetName, project_id: project })).body.id as string;
  return {
    tenant,
    api,
    projectId: project,
    datasetId: dataset,
    async table(tableName: string, schema: Column[]): Promise<string> {
      const res = await api.post('/api/v1/tables', { name: tableName, schema, dataset_id: dataset });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
    /** Runs `sql` in DuckDB with `{table}` standing for the table's physical name. */
    async fill(tableId: string, sql: string): Promise<void> {
      const { dataset: schema, table } = physicalNames({ datasetId: dataset, tableId });
      const catalog = await openWarehouseCatalog(ctx.dataDir);
      try {
        await catalog.run(sql.replaceAll('{table}', `${schema}.${table}`));
      } finally {
        catalog.close();
      }
    },
    async query(text: string, token = tenant.editor.token): Promise<string> {
      const res = await as(ctx.app, token).post('/api/v1/queries', { query_text: text, project_id: project });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
  };
}

export type QueryFixture = Awaited<ReturnType<typeof queryFixture>>;

/** The job once it has ended (read again every 50 ms). */
export async function finished(ctx: TestContext, token: string, jobId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(ctx.app)
      .get(`/api/v1/query-jobs/${jobId}`)
      .set({ Authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    if (!['PENDING', 'RUNNING'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Saves `text`, runs it and waits for the job to end. */
export async function runToEnd(
  ctx: TestContext,
  fixture: { query(text: string, token?: string): Promise<string> },
  tenant: TenantFixture,
  text: string,
) {
  const queryId = await fixture.query(text, tenant.editor.token);
  const run = await as(ctx.app, tenant.editor.token).post('/api/v1/queries/run', { query_id: queryId, query_text: text });
  expect({ status: run.status, body: run.body }).toMatchObject({ status: 202, body: { job_id: expect.any(String) } });
  return finished(ctx, tenant.editor.token, run.body.job_id);
}

/**
 * Shares the sharer's dataset into the owner's project as approved requests would (the
 * associations of src/associations, written directly as the approvals feature would write them).
 */
export async function shareDataset(ctx: TestContext, parties: { owner: QueryFixture; sharer: QueryFixture }): Promise<void> {
  const { owner, sharer } = parties;
  const approval = (kind: 'project_tenant' | 'project_dataset') =>
    ctx.db.approvalRequest.create({
      data: {
        kind,
        status: 'approved',
        requestedBy: owner.tenant.editor.id,
        requesterTenantId: owner.tenant.id,
        projectId: owner.projectId,
        projectTenantId: owner.tenant.id,
        reviewerTenantId: sharer.tenant.id,
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
  await ctx.db.projectTenant.create({
    data: {
      projectId: owner.projectId,
      ownerTenantId: owner.tenant.id,
      tenantId: sharer.tenant.id,
      approvalId: (await approval('project_tenant')).id,
    },
  });
  await ctx.db.projectDataset.create({
    data: {
      projectId: owner.projectId,
      tenantId: sharer.tenant.id,
      datasetId: sharer.datasetId,
      approvalId: (await approval('project_dataset')).id,
    },
  });
}

/**
 * Two tenants: Owner, whose project holds dataset `sales` with `orders(person, margin private)`,
 * and Sharer, with dataset `hr` holding `people(name, salary private, team)`; each table filled by
 * its INSERT (`{table}` is replaced by the table's name).
 */
export async function ownerAndSharer(ctx: TestContext, rows: { orders: string; people: string }) {
  const owner = await queryFixture(ctx, 'Owner', 'sales');
  const orders = await owner.table('orders', [
    { name: 'person', type: 'STRING' },
    { name: 'margin', type: 'FLOAT64', private: true },
  ]);
  await owner.fill(orders, rows.orders);
  const sharer = await queryFixture(ctx, 'Sharer', 'hr');
  const people = await sharer.table('people', [
    { name: 'name', type: 'STRING' },
    { name: 'salary', type: 'INT64', private: true },
    { name: 'team', type: 'STRING' },
  ]);
  await sharer.fill(people, rows.people);
  return { owner, sharer };
}

/** Exports a job's result as `format` and `compression` and waits for the export to end. */
export async function exportJob(ctx: TestContext, fixture: QueryFixture, jobId: string, format: string, compression: string) {
  const created = await fixture.api.post(`/api/v1/query-jobs/${jobId}/exports`, { format, compression });
  expect(created.status).toBe(202);
  expect(created.body).toMatchObject({
    status: 'PENDING',
    format,
    compression,
    query_job_id: jobId,
    tenant_id: fixture.tenant.id,
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fixture.api.get(`/api/v1/exports/${created.body.id}`);
    if (!['PENDING', 'RUNNING'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error('export still running');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An export's file, through its download link. */
export async function downloadExport(ctx: TestContext, fixture: QueryFixture, exportId: string): Promise<Buffer> {
  const link = await fixture.api.get(`/api/v1/exports/${exportId}/download-url`);
  expect(link.status).toBe(200);
  const url = new URL(link.body.url);
  const res = await request(ctx.app)
    .get(`${url.pathname}${url.search}`)
    .buffer(true)
    .parse((stream, done) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

/** The records of an Avro file as avsc reads them (longs as BigInt with `bigLongs`), and the codec it names. */
export async function avroRows(file: string, options: { bigLongs?: boolean } = {}) {
  const rows: Record<string, unknown>[] = [];
  let codec = '';
  await new Promise<void>((resolve, reject) => {
    avsc
      .createFileDecoder(file, {
        ...(options.bigLongs
          ? { parseHook: (schema: avsc.Schema) => avsc.Type.forSchema(schema, { registry: { long: bigLong } }) }
          : {}),
      })
      .on('metadata', (_type: unknown, name: string) => (codec = name))
      .on('data', (row: Record<string, unknown>) => rows.push({ ...row }))
      .on('end', resolve)
      .on('error', reject);
  });
  return { codec, rows };
}
