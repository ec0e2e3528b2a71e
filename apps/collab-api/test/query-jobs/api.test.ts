import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant } from '../fixtures.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';
import { finished, queryFixture, type QueryFixture, runToEnd } from './helpers.js';

let ctx: TestContext;
let fx: QueryFixture;
let ordersId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  fx = await queryFixture(ctx);
  ordersId = await fx.table('orders', [
    { name: 'id', type: 'INT64', mode: 'REQUIRED' },
    { name: 'customer', type: 'STRING' },
    { name: 'amount', type: 'FLOAT64' },
  ]);
  await fx.fill(ordersId, "INSERT INTO {table} SELECT range, 'c' || (range % 7), range * 1.5 FROM range(1, 1001)");
}, 60_000);

afterAll(() => ctx?.close());

describe('saved queries', () => {
  it('creates, lists with a project filter, gets, updates and soft-deletes', async () => {
    const created = await fx.api.post('/api/v1/queries', { query_text: 'SELECT 1', project_id: fx.projectId });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      query_text: 'SELECT 1',
      project_id: fx.projectId,
      tenant_id: fx.tenant.id,
      archived_at: null,
    });
    const id = created.body.id as string;
    const listed = await fx.api.get(`/api/v1/queries?project_id=${fx.projectId}`);
    expect(listed.body.queries.map((q: { id: string }) => q.id)).toContain(id);
    const other = await fx.api.get(`/api/v1/queries?project_id=${randomUUID()}`);
    expect(other.body.queries).toEqual([]);
    const patched = await fx.api.patch(`/api/v1/queries/${id}`, { query_text: 'SELECT 2', project_id: null });
    expect(patched.body).toMatchObject({ query_text: 'SELECT 2', project_id: fx.projectId });
    expect((await fx.api.delete(`/api/v1/queries/${id}`)).status).toBe(204);
    expect((await fx.api.get(`/api/v1/queries/${id}`)).status).toBe(404);
    expect((await fx.api.delete(`/api/v1/queries/${id}`)).status).toBe(404);
    expect((await fx.api.get('/api/v1/queries')).body.queries.map((q: { id: string }) => q.id)).not.toContain(id);
  });

  it('refuses wrong types, blank text, NUL bytes and unknown fields with 422', async () => {
    for (const body of [
      { query_text: 42, project_id: fx.projectId },
      { query_text: '   ', project_id: fx.projectId },
      { query_text: 'SELECT 1\u0000', project_id: fx.projectId },
      { query_text: 'SELECT 1', project_id: 'not-a-uuid' },
      { query_text: 'SELECT 1', project_id: fx.projectId, extra: true },
      { project_id: fx.projectId },
    ]) {
      const res = await fx.api.post('/api/v1/queries', body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.body.detail[0]).toEqual(
        expect.objectContaining({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) }),
      );
    }
    expect((await fx.api.get('/api/v1/queries/not-a-uuid')).status).toBe(422);
    expect((await fx.api.get('/api/v1/queries?limit=0')).status).toBe(422);
    expect((await fx.api.get('/api/v1/queries?limit=1001')).status).toBe(422);
  });

  it('keeps SQL in text as text', async () => {
    const text = "SELECT 1; DROP TABLE queries; -- '); DELETE FROM tenants; --";
    const res = await fx.api.post('/api/v1/queries', { query_text: text, project_id: fx.projectId });
    expect(res.status).toBe(201);
    expect((await fx.api.get(`/api/v1/queries/${res.body.id}`)).body.query_text).toBe(text);
  });

  it("hides other tenants' queries and projects (404)", async () => {
    const other = await seedTenant(ctx, 'Other');
    const mine = await fx.query('SELECT 1');
    const them = as(ctx.app, other.editor.token);
    expect((await them.get(`/api/v1/queries/${mine}`)).status).toBe(404);
    expect((await them.patch(`/api/v1/queries/${mine}`, { query_text: 'SELECT 2' })).status).toBe(404);
    expect((await them.delete(`/api/v1/queries/${mine}`)).status).toBe(404);
    expect((await them.post('/api/v1/queries', { query_text: 'SELECT 1', project_id: fx.projectId })).status).toBe(404);
    expect((await them.post('/api/v1/queries/run', { query_id: mine, query_text: 'SELECT 1' })).status).toBe(404);
    expect((await them.get(`/api/v1/queries/${mine}/jobs`)).status).toBe(404);
  });
});

describe('running', () => {
  it('answers 202 at once, then the worker runs the job on DuckDB and records its measurements', async () => {
    const text =
      'SELECT customer, count(*) AS orders, sum(amount) AS total FROM sales.orders GROUP BY customer ORDER BY customer';
    const job = await runToEnd(ctx, fx, fx.tenant, text);
    expect(job).toMatchObject({
      status: 'DONE',
      tenant_id: fx.tenant.id,
      total_rows: 7,
      cache_hit: false,
      error_result: null,
      num_dml_affected_rows: null,
      private_row_count: 0,
      query_plan: null,
      exports: [],
    });
    // customer (strings) and amount (8 bytes) of 1,000 rows.
    expect(job.total_bytes_processed).toBeGreaterThan(8 * 1000);
    expect(job.total_slot_ms).toEqual(expect.any(Number));
    expect(Date.parse(job.ended)).toBeGreaterThanOrEqual(Date.parse(job.started));
    expect(Date.parse(job.started)).toBeGreaterThanOrEqual(Date.parse(job.created));
    expect(job.running_job_id).toBe(job.id);
    const page = await fx.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({
      columns: ['customer', 'orders', 'total'],
      total_rows: 7,
      page: 1,
      page_size: 50,
      total_pages: 1,
    });
    expect(page.body.column_privacy).toEqual({ customer: 'public', orders: 'public', total: 'public' });
    expect(page.body.rows[0]).toEqual({ data: { customer: 'c0', orders: 142, total: expect.any(Number) } });
    const jobs = await fx.api.get('/api/v1/query-jobs');
    expect(jobs.body.query_jobs.map((j: { id: string }) => j.id)).toContain(job.id);
    const ofQuery = await fx.api.get(`/api/v1/queries/${job.query_id}/jobs`);
    expect(ofQuery.body.query_jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
  });

  it("runs a query again with its result's columns as they are bound now: the same, or those of a table that gained a column", async () => {
    const table = await fx.table('widened', [{ name: 'id', type: 'INT64' }]);
    await fx.fill(table, 'INSERT INTO {table} VALUES (1)');
    const text = 'SELECT * FROM sales.widened';
    const queryId = await fx.query(text);
    const run = async () => {
      const started = await fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
      const page = await fx.api.get(`/api/v1/query-jobs/${started.body.job_id as string}/results?timeout_ms=30000`);
      expect(page.status).toBe(200);
      return { schema: page.body.schema, rows: page.body.rows };
    };
    const first = { schema: [{ name: 'id', type: 'INT64' }], rows: [{ data: { id: 1 } }] };
    expect(await run()).toEqual(first);
    // Its check and its columns were made by the first run: the second takes them as they were.
    expect(await run()).toEqual(first);
    const widened = await fx.api.patch(`/api/v1/tables/${table}`, {
      schema: [
        { name: 'id', type: 'INT64' },
        { name: 'note', type: 'STRING' },
      ],
    });
    expect(widened.status).toBe(200);
    expect(await run()).toEqual({
      schema: [
        { name: 'id', type: 'INT64' },
        { name: 'note', type: 'STRING' },
      ],
      rows: [{ data: { id: 1, note: null } }],
    });
  });

  it('pages through a stored result in order, with the bounds checked', async () => {
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT id FROM sales.orders ORDER BY id DESC');
    expect(job.total_rows).toBe(1000);
    const get = (query: string) => fx.api.get(`/api/v1/query-jobs/${job.id}/results${query}`);
    const first = await get('?page=1&page_size=200');
    expect(first.body.rows).toHaveLength(200);
    expect(first.body.rows[0].data.id).toBe(1000);
    expect(first.body.total_pages).toBe(5);
    const last = await get('?page=5&page_size=200');
    expect(last.body.rows.map((row: { data: { id: number } }) => row.data.id)).toEqual(
      Array.from({ length: 200 }, (_, i) => 200 - i),
    );
    const odd = await get('?page=34&page_size=30');
    expect(odd.body.rows.map((row: { data: { id: number } }) => row.data.id)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect((await get('?page=35&page_size=30')).body).toMatchObject({ rows: [], total_pages: 34, page: 35 });
    expect((await get('')).body.rows).toHaveLength(50);
    for (const query of ['?page=0', '?page=-1', '?page_size=0', '?page_size=201', '?page=abc', '?page=1.5', '?other=1']) {
      expect({ query, status: (await get(query)).status }).toEqual({ query, status: 422 });
    }
  });

  it('reads pages in the stored order also where a page spans two DuckDB row groups (pages are read without ORDER BY)', async () => {
    // 300,000 rows: three of DuckDB's row groups (122,880 rows each), pages on both sides of each boundary.
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT range AS n FROM range(300000) ORDER BY n DESC');
    expect(job.total_rows).toBe(300_000);
    for (const page of [614, 615, 1229, 1500]) {
      const answer = await fx.api.get(`/api/v1/query-jobs/${job.id}/results?page=${page}&page_size=200`);
      const first = 300_000 - 1 - (page - 1) * 200;
      expect(answer.body.rows.map((row: { data: { n: number } }) => row.data.n)).toEqual(
        Array.from({ length: 200 }, (_, i) => first - i),
      );
    }
  });

  it('answers 502 when a stored result is gone, naming no warehouse object', async () => {
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT 1 AS one');
    const catalog = await openWarehouseCatalog(ctx.dataDir);
    try {
      await catalog.run(`DROP TABLE collab_results.r_${job.id.replaceAll('-', '_')}`);
    } finally {
      catalog.close();
    }
    const res = await fx.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/^Warehouse error: /);
    expect(res.body.detail).not.toMatch(/r_[0-9a-f]{8}|collab_results|\/tmp\//);
  });

  it('refuses a run before it starts: unknown, deleted, or changed text', async () => {
    const text = 'SELECT 1 AS one';
    const id = await fx.query(text);
    expect((await fx.api.post('/api/v1/queries/run', { query_id: randomUUID(), query_text: text })).status).toBe(404);
    const changed = await fx.api.post('/api/v1/queries/run', { query_id: id, query_text: 'SELECT 2' });
    expect(changed.status).toBe(409);
    expect(changed.body.detail).toMatch(/differs from the saved/);
    expect((await fx.api.post('/api/v1/queries/run', { query_id: 'x', query_text: text })).status).toBe(422);
    expect((await fx.api.post('/api/v1/queries/run', { query_id: id })).status).toBe(422);
    await fx.api.delete(`/api/v1/queries/${id}`);
    expect((await fx.api.post('/api/v1/queries/run', { query_id: id, query_text: text })).status).toBe(404);
    // A query whose project was deleted meanwhile.
    const gone = await queryFixture(ctx, 'Gone');
    const orphan = await gone.query(text);
    await ctx.db.project.update({ where: { id: gone.projectId }, data: { archivedAt: new Date() } });
    const refused = await gone.api.post('/api/v1/queries/run', { query_id: orphan, query_text: text });
    expect({ status: refused.status, detail: refused.body.detail }).toEqual({ status: 404, detail: 'Project not found' });
  });

  it('fails a job whose SQL the warehouse rejects, with its message and no internal names', async () => {
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT no_such_column FROM sales.orders');
    expect(job.status).toBe('FAILED');
    expect(job.error_result).toEqual({ reason: 'invalidQuery', message: expect.stringMatching(/no_such_column/) });
    expect(job.error_details).toEqual({ errors: [job.error_result] });
    expect(JSON.stringify(job)).not.toMatch(/ds_[0-9a-f]{8}|t_[0-9a-f]{8}|\/tmp\/|\.duckdb/);
    const results = await fx.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(results.status).toBe(409);
  });

  it("runs numbers as written (1e1, past 2^53), and fails one past DOUBLE's range at once, as the query's fault", async () => {
    // (DuckDB prints the checked statement's 1e1 back as 10.0, which it reads as a DECIMAL: the same number.)
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT 1e1 AS d, 9007199254740993 + 0 AS big');
    expect(job.status).toBe('DONE');
    const [{ data }] = (await fx.api.get(`/api/v1/query-jobs/${job.id}/results`).expect(200)).body.rows;
    expect({ d: Number(data.d), big: data.big }).toEqual({ d: 10, big: '9007199254740993' });
    const infinite = await runToEnd(ctx, fx, fx.tenant, 'SELECT 1e400 AS x');
    expect(infinite).toMatchObject({
      status: 'FAILED',
      error_result: { reason: 'invalidQuery', message: expect.stringMatching(/beyond DOUBLE's range/) },
    });
  });

  it('answers 404 for results and jobs of another tenant', async () => {
    const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT 1 AS one');
    const other = await seedTenant(ctx, 'Stranger');
    const them = as(ctx.app, other.editor.token);
    expect((await them.get(`/api/v1/query-jobs/${job.id}`)).status).toBe(404);
    expect((await them.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(404);
    expect((await them.get('/api/v1/query-jobs')).body.query_jobs).toEqual([]);
    expect(await finished(ctx, fx.tenant.editor.token, job.id)).toMatchObject({ status: 'DONE', error_result: null });
  });
});

test('documents every query, job, quota and export route in the OpenAPI document', async () => {
  const res = await request(ctx.app).get('/openapi.json');
  expect(res.status).toBe(200);
  const paths = Object.keys(res.body.paths as object);
  for (const path of [
    '/api/v1/queries',
    '/api/v1/queries/{query_id}',
    '/api/v1/queries/run',
    '/api/v1/queries/{query_id}/jobs',
    '/api/v1/query-jobs',
    '/api/v1/query-jobs/{job_id}',
    '/api/v1/query-jobs/{job_id}/results',
    '/api/v1/query-jobs/{job_id}/exports',
    '/api/v1/exports/{export_id}',
    '/api/v1/exports/{export_id}/download-url',
    '/api/v1/quota/summary',
    '/api/v1/quota/cost-history',
    '/api/v1/quota',
  ]) {
    expect(paths).toContain(path);
  }
});
