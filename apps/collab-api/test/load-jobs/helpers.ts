import request from 'supertest';
import { bearer, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';

export interface Column {
  name: string;
  type: string;
  mode?: string;
  private?: boolean;
}

/** A tenant with a project and dataset, and tables made through the API. */
export async function loadFixture(ctx: TestContext, name = 'Loads') {
  const tenant = await seedTenant(ctx, name);
  const api = (path: string, body: object) => request(ctx.app).post(path).set(bearer(tenant.editor.token)).send(body);
  const project = (await api('/api/v1/projects', { name })).body.id as string;
  const dataset = (await api('/api/v1/datasets', { name, project_id: project })).body.id as string;
  let tables = 0;
  return {
    tenant,
    token: tenant.editor.token,
    datasetId: dataset,
    async table(schema: Column[], tableName = `t${++tables}`): Promise<string> {
      const res = await api('/api/v1/tables', { name: tableName, schema, dataset_id: dataset });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
  };
}

export type LoadFixture = Awaited<ReturnType<typeof loadFixture>>;

export interface UploadOptions {
  fileName: string;
  content: Buffer | string;
  write_disposition?: string;
  autodetect?: boolean;
  source_format?: string;
}

/** POST /load_job/ with the file as multipart form data. */
export function upload(ctx: TestContext, token: string, tableId: string, options: UploadOptions) {
  const req = request(ctx.app).post('/load_job/').set(bearer(token)).field('table_id', tableId);
  if (options.write_disposition) req.field('write_disposition', options.write_disposition);
  if (options.autodetect !== undefined) req.field('autodetect', String(options.autodetect));
  if (options.source_format) req.field('source_format', options.source_format);
  return req.attach('file', Buffer.from(options.content), options.fileName);
}

/** The job once it has ended (read again every 100 ms). */
export async function ended(ctx: TestContext, token: string, jobId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(ctx.app).get(`/load_job/${jobId}`).set(bearer(token));
    expect(res.status).toBe(200);
    if (!['Pending', 'Running'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Uploads and waits for the job to end. */
export async function load(ctx: TestContext, token: string, tableId: string, options: UploadOptions) {
  const res = await upload(ctx, token, tableId, options);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { status: 'Running' } });
  return ended(ctx, token, res.body.id);
}

/** The table's rows in DuckDB, in insertion order, as JSON-friendly values. */
export async function rowsOf(
  ctx: TestContext,
  fixture: { datasetId: string },
  tableId: string,
): Promise<Record<string, unknown>[]> {
  const catalog = await openWarehouseCatalog(ctx.dataDir);
  try {
    return await catalog.rows(fixture.datasetId, tableId);
  } finally {
    catalog.close();
  }
}

export async function schemaOf(ctx: TestContext, token: string, tableId: string) {
  return (await request(ctx.app).get(`/api/v1/tables/${tableId}`).set(bearer(token))).body.schema;
}

export type { TenantFixture };
