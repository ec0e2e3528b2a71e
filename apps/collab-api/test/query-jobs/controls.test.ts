/**
 * The controls analysts set on a run and read from its results: saved queries' names and
 * descriptions, a run's maximum_bytes_billed (refused before it runs, uncharged, as BigQuery
 * does) and timeout_seconds (at most the service's limit), and each result page's schema with
 * BigQuery's type names. Every control with the input it refuses. And the bytes a job is billed,
 * measured before it runs: they follow the table's data through loads and other writes. And a
 * result page that waits for its job to end (timeout_ms), as BigQuery's getQueryResults does.
 */
import { googleSqlTypeOfDuckDb } from '../../src/adapters/warehouse/query/result-types.js';
import { QueryJobEnds } from '../../src/query-jobs/ends.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant } from '../fixtures.js';
import { load } from '../load-jobs/helpers.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';
import { finished, queryFixture, type QueryFixture } from './helpers.js';

let ctx: TestContext;
let fx: QueryFixture;
const TEXT = 'SELECT customer, sum(amount) AS total FROM sales.orders GROUP BY customer ORDER BY customer';
let queryId: string;

beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_QUERY_TIMEOUT_SECONDS: '30' });
  await ctx.startWorker();
  fx = await queryFixture(ctx);
  const orders = await fx.table('orders', [
    { name: 'id', type: 'INT64' },
    { name: 'customer', type: 'STRING' },
    { name: 'amount', type: 'FLOAT64' },
  ]);
  await fx.fill(orders, "INSERT INTO {table} SELECT range, 'c' || (range % 3), range * 0.5 FROM range(1, 101)");
  queryId = await fx.query(TEXT);
}, 60_000);

afterAll(() => ctx?.close());

const run = (body: Record<string, unknown>) =>
  fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: TEXT, ...body });

async function runToEnd(body: Record<string, unknown>) {
  const res = await run(body);
  expect(res.status).toBe(202);
  return finished(ctx, fx.tenant.editor.token, res.body.job_id);
}

function expectValidationError(res: { status: number; body: { detail: unknown } }, field: string) {
  expect(res.status).toBe(422);
  expect(res.body.detail).toEqual(
    expect.arrayContaining([expect.objectContaining({ loc: expect.arrayContaining(['body', field]), msg: expect.any(String) })]),
  );
}

describe('saved queries: name and description', () => {
  it('are saved, shown, changed and removed', async () => {
    const created = await fx.api.post('/api/v1/queries', {
      query_text: 'SELECT 1 AS one',
      project_id: fx.projectId,
      name: '  Daily revenue  ',
      description: 'Revenue per customer, for the morning meeting.\nSecond line.',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Daily revenue',
      description: 'Revenue per customer, for the morning meeting.\nSecond line.',
    });
    const id = created.body.id as string;
    expect((await fx.api.get(`/api/v1/queries/${id}`)).body).toMatchObject({ name: 'Daily revenue' });
    // Absent keeps both.
    expect((await fx.api.patch(`/api/v1/queries/${id}`, { query_text: 'SELECT 2 AS two' })).body).toMatchObject({
      name: 'Daily revenue',
      description: expect.stringContaining('morning'),
    });
    expect((await fx.api.patch(`/api/v1/queries/${id}`, { name: 'Weekly', description: '' })).body).toMatchObject({
      name: 'Weekly',
      description: null,
    });
    expect((await fx.api.patch(`/api/v1/queries/${id}`, { name: null })).body).toMatchObject({ name: null, description: null });
    const bare = await fx.api.post('/api/v1/queries', { query_text: 'SELECT 1 AS one', project_id: fx.projectId });
    expect(bare.body).toMatchObject({ name: null, description: null });
  });

  it('refuses wrong types, blank or long names, long descriptions, NUL and control characters (422)', async () => {
    const base = { query_text: 'SELECT 1 AS one', project_id: fx.projectId };
    const id = (await fx.api.post('/api/v1/queries', base)).body.id as string;
    for (const [field, value] of [
      ['name', ''],
      ['name', '   '],
      ['name', 'x'.repeat(201)],
      ['name', 'a\u0000b'],
      ['name', 'tab\there'],
      ['name', 42],
      ['name', ['a']],
      ['description', 'x'.repeat(4001)],
      ['description', 'a\u0000b'],
      ['description', false],
    ] as const) {
      expectValidationError(await fx.api.post('/api/v1/queries', { ...base, [field]: value }), field);
      expectValidationError(await fx.api.patch(`/api/v1/queries/${id}`, { [field]: value }), field);
    }
    // SQL in a name is a name.
    const sql = "x'); DROP TABLE queries; --";
    expect((await fx.api.patch(`/api/v1/queries/${id}`, { name: sql })).body.name).toBe(sql);
    expect((await fx.api.post('/api/v1/queries', { ...base, name: 'x'.repeat(200), description: 'y'.repeat(4000) })).status).toBe(
      201,
    );
  });
});

describe('maximum_bytes_billed', () => {
  it('refuses negative, zero, fractional, non-numeric and out-of-range limits (422)', async () => {
    for (const value of [
      0,
      -1,
      1.5,
      2 ** 53,
      1e300,
      '0',
      '-5',
      '+5',
      '1.5',
      '1e6',
      ' 10',
      '10 ',
      '',
      '12abc',
      '9223372036854775808',
      '99999999999999999999999',
      true,
      null,
      {},
      [10],
    ]) {
      expectValidationError(await run({ maximum_bytes_billed: value }), 'maximum_bytes_billed');
    }
    expect(await ctx.db.queryJob.count({ where: { queryId } })).toBe(0);
  });

  it('fails a job over the limit before it runs, bytesBilledLimitExceeded and uncharged, as BigQuery does', async () => {
    const usageBefore = await fx.api.get('/api/v1/quota/summary').set({ Authorization: `Bearer ${fx.tenant.admin.token}` });
    for (const limit of [1000, '10485759']) {
      const job = await runToEnd({ maximum_bytes_billed: limit });
      expect(job).toMatchObject({
        status: 'FAILED',
        maximum_bytes_billed: String(limit),
        error_result: {
          reason: 'bytesBilledLimitExceeded',
          // Every query is billed at least 10 MB.
          message: `Query exceeded limit for bytes billed: ${limit}. 10485760 or higher required.`,
        },
        total_bytes_billed: null,
        results_expire_at: null,
      });
      expect(await ctx.db.queryCost.count({ where: { queryJobId: job.id } })).toBe(0);
      // It never ran: nothing was stored.
      const catalog = await openWarehouseCatalog(ctx.dataDir);
      try {
        const stored = `r_${String(job.id).replaceAll('-', '_')}`;
        await expect(catalog.run(`SELECT * FROM collab_results.${stored}`)).rejects.toThrow(/does not exist/);
      } finally {
        catalog.close();
      }
      expect((await fx.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(409);
    }
    const usageAfter = await fx.api.get('/api/v1/quota/summary').set({ Authorization: `Bearer ${fx.tenant.admin.token}` });
    expect(usageAfter.body.usage.daily_cost_usd).toBe(usageBefore.body.usage.daily_cost_usd);
  });

  it("measures the bytes of the table's data as it is now: after a load that keeps the row count, and after other writes", async () => {
    const labels = await fx.table('labels', [{ name: 'label', type: 'STRING' }]);
    const text = 'SELECT count(label) AS n FROM sales.labels';
    const labelsQuery = await fx.query(text);
    const processed = async () => {
      const res = await fx.api.post('/api/v1/queries/run', {
        query_id: labelsQuery,
        query_text: text,
        maximum_bytes_billed: 10485760,
      });
      const job = await finished(ctx, fx.tenant.editor.token, res.body.job_id);
      expect(job.status).toBe('DONE');
      return job.total_bytes_processed as number;
    };
    expect(await processed()).toBe(0);
    const csv = (label: string) => `label\n${Array.from({ length: 10 }, () => label).join('\n')}\n`;
    const loaded = (label: string, disposition: string) =>
      load(ctx, fx.tenant.editor.token, labels, { fileName: 'labels.csv', content: csv(label), write_disposition: disposition });
    expect(await loaded('ab', 'WRITE_APPEND')).toMatchObject({ status: 'Completed' });
    expect(await processed()).toBe(10 * (2 + 2));
    expect(await processed()).toBe(10 * (2 + 2));
    // The same number of rows, longer values.
    expect(await loaded('abcdef', 'WRITE_TRUNCATE')).toMatchObject({ status: 'Completed' });
    expect(await processed()).toBe(10 * (6 + 2));
    // Rows written behind the service's back.
    await fx.fill(labels, "INSERT INTO {table} VALUES ('xyz')");
    expect(await processed()).toBe(10 * (6 + 2) + (3 + 2));
  });

  it('runs a job within the limit, a JSON integer or an int64 string, and shows the limit as BigQuery writes it', async () => {
    const exact = await runToEnd({ maximum_bytes_billed: 10485760 });
    expect(exact).toMatchObject({ status: 'DONE', maximum_bytes_billed: '10485760', total_bytes_billed: 10485760 });
    const largest = await runToEnd({ maximum_bytes_billed: '9223372036854775807' });
    expect(largest).toMatchObject({ status: 'DONE', maximum_bytes_billed: '9223372036854775807' });
    const none = await runToEnd({});
    expect(none).toMatchObject({ status: 'DONE', maximum_bytes_billed: null, timeout_seconds: null });
  });
});

describe('timeout_seconds', () => {
  it.each([false, true])(
    'refuses zero, negative, fractional, non-numeric and huge values, and one over the service limit (422); dry run %p',
    async (dryRun) => {
      for (const value of [0, -1, 1.5, 1e20, '10', '', true, null, {}]) {
        expectValidationError(await run({ timeout_seconds: value, dry_run: dryRun }), 'timeout_seconds');
      }
      for (const value of [31, 2_147_483_647]) {
        const res = await run({ timeout_seconds: value, dry_run: dryRun });
        expect({ status: res.status, body: res.body }).toEqual({
          status: 422,
          body: {
            detail: [
              {
                loc: ['body', 'timeout_seconds'],
                msg: "timeout_seconds may be at most 30, this service's limit (COLLAB_QUERY_TIMEOUT_SECONDS)",
                type: 'less_than_equal',
              },
            ],
          },
        });
      }
    },
  );

  it("stops a query at the run's own limit, and accepts the service's limit itself", async () => {
    const heavy = 'SELECT count(*) AS n FROM sales.orders, range(20000) x(a), range(20000) y(b) WHERE a + b >= 0';
    const heavyId = await fx.query(heavy);
    const started = Date.now();
    const res = await fx.api.post('/api/v1/queries/run', { query_id: heavyId, query_text: heavy, timeout_seconds: 1 });
    const job = await finished(ctx, fx.tenant.editor.token, res.body.job_id);
    expect(job).toMatchObject({
      status: 'FAILED',
      timeout_seconds: 1,
      error_result: { reason: 'timeout', message: 'The query ran longer than 1 s and was stopped' },
    });
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(await runToEnd({ timeout_seconds: 30 })).toMatchObject({ status: 'DONE', timeout_seconds: 30 });
  });
});

describe('result schema', () => {
  it("lists the result's columns in order with BigQuery's type names", async () => {
    const job = await runToEnd({});
    const page = await fx.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(page.body.schema).toEqual([
      { name: 'customer', type: 'STRING' },
      { name: 'total', type: 'FLOAT64' },
    ]);
    const text = `SELECT 1 AS i, 2::INTEGER AS small, sum(id) AS summed, 'x' AS s, 1.5::DOUBLE AS f, true AS b,
        1.25::DECIMAL(10, 2) AS d, 1::DECIMAL(38, 10) AS wide, DATE '2024-01-02' AS day, TIMESTAMP '2024-01-02 03:04:05' AS civil,
        TIMESTAMPTZ '2024-01-02 03:04:05+00' AS instant, TIME '03:04:05' AS t, '\\x01'::BLOB AS raw, INTERVAL 1 DAY AS span,
        [1, 2] AS list, {'a b': 'x', 'n': [1.5]} AS struct, MAP {'k': 1} AS map, 1 AS i,
        '{"a": 1}'::JSON AS doc, ['[1]'::JSON] AS docs, {'doc': '{}'::JSON} AS wrapped
      FROM sales.orders`;
    const typed = await runToEnd({ query_id: await fx.query(text), query_text: text });
    expect(typed.status).toBe('DONE');
    const typedPage = await fx.api.get(`/api/v1/query-jobs/${typed.id}/results`);
    expect(typedPage.body.schema).toEqual([
      { name: 'i', type: 'INT64' },
      { name: 'small', type: 'INT64' },
      { name: 'summed', type: 'INT64' },
      { name: 's', type: 'STRING' },
      { name: 'f', type: 'FLOAT64' },
      { name: 'b', type: 'BOOL' },
      { name: 'd', type: 'NUMERIC' },
      { name: 'wide', type: 'BIGNUMERIC' },
      { name: 'day', type: 'DATE' },
      { name: 'civil', type: 'DATETIME' },
      { name: 'instant', type: 'TIMESTAMP' },
      { name: 't', type: 'TIME' },
      { name: 'raw', type: 'BYTES' },
      { name: 'span', type: 'INTERVAL' },
      { name: 'list', type: 'ARRAY<INT64>' },
      { name: 'struct', type: 'STRUCT<`a b` STRING, `n` ARRAY<NUMERIC>>' },
      { name: 'map', type: 'JSON' },
      { name: 'i_2', type: 'INT64' },
      // JSON is VARCHAR under an alias in DuckDB, whose print of the type drops it.
      { name: 'doc', type: 'JSON' },
      { name: 'docs', type: 'ARRAY<JSON>' },
      { name: 'wrapped', type: 'STRUCT<`doc` JSON>' },
    ]);
    expect(typedPage.body.schema.map((column: { name: string }) => column.name)).toEqual(typedPage.body.columns);
  });

  it("maps DuckDB's printed types, nested and quoted ones too, and anything unknown to JSON", () => {
    expect(googleSqlTypeOfDuckDb('HUGEINT')).toBe('INT64');
    expect(googleSqlTypeOfDuckDb('DECIMAL(38,9)')).toBe('NUMERIC');
    expect(googleSqlTypeOfDuckDb('DECIMAL(39,9)')).toBe('BIGNUMERIC');
    expect(googleSqlTypeOfDuckDb('INTEGER[3]')).toBe('ARRAY<INT64>');
    expect(googleSqlTypeOfDuckDb('VARCHAR[][]')).toBe('ARRAY<ARRAY<STRING>>');
    expect(googleSqlTypeOfDuckDb('STRUCT("a ""q"" `b`" STRUCT(x TIMESTAMP WITH TIME ZONE)[])')).toBe(
      'STRUCT<`a "q" \\`b\\`` ARRAY<STRUCT<`x` TIMESTAMP>>>',
    );
    expect(googleSqlTypeOfDuckDb("ENUM('a', 'b)')")).toBe('STRING');
    expect(googleSqlTypeOfDuckDb('UNION("k" INTEGER)')).toBe('JSON');
    expect(googleSqlTypeOfDuckDb('GEOMETRY')).toBe('JSON');
    expect(googleSqlTypeOfDuckDb('')).toBe('JSON');
    expect(googleSqlTypeOfDuckDb('STRUCT(')).toBe('JSON');
  });
});

describe('waiting for results', () => {
  it('answers the first page as soon as the job is DONE, in the request that waits for it', async () => {
    const res = await run({});
    const page = await fx.api.get(`/api/v1/query-jobs/${res.body.job_id}/results?timeout_ms=30000`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total_rows: 3, rows: [{ data: { customer: 'c0' } }, {}, {}] });
    // Waiting for a job that ended answers at once.
    expect(
      (await fx.api.get(`/api/v1/query-jobs/${res.body.job_id}/results?timeout_ms=60000&page=2&page_size=2`)).body,
    ).toMatchObject({
      page: 2,
      rows: [{ data: { customer: 'c2' } }],
    });
  });

  it('answers 409 for a job still running when the wait is over, or one that failed meanwhile', async () => {
    const heavy = 'SELECT count(*) AS n FROM sales.orders, range(20000) x(a), range(20000) y(b) WHERE a + b >= 0';
    const running = await fx.api.post('/api/v1/queries/run', { query_id: await fx.query(heavy), query_text: heavy });
    const waited = await fx.api.get(`/api/v1/query-jobs/${running.body.job_id}/results?timeout_ms=300`);
    expect(waited.status).toBe(409);
    expect(waited.body.detail).toMatch(/^The job is (PENDING|RUNNING): its results are ready once it is DONE$/);
    expect((await fx.api.post(`/api/v1/query-jobs/${running.body.job_id}/cancel`)).status).toBe(202);
    expect((await finished(ctx, fx.tenant.editor.token, running.body.job_id)).status).toBe('CANCELLED');

    const broken = 'SELECT nope FROM sales.orders';
    const failing = await fx.api.post('/api/v1/queries/run', { query_id: await fx.query(broken), query_text: broken });
    const failed = await fx.api.get(`/api/v1/query-jobs/${failing.body.job_id}/results?timeout_ms=30000`);
    expect({ status: failed.status, body: failed.body }).toEqual({
      status: 409,
      body: { detail: 'The job is FAILED: it has no results' },
    });
  });

  it('answers waiting requests from the first rows the worker read as the job ended, and other pages from the warehouse', async () => {
    const text = 'SELECT id, customer FROM sales.orders ORDER BY id';
    const id = await fx.query(text);
    const engine = ctx.deps.queryEngine;
    const runQuery = engine.run.bind(engine);
    const readRows = engine.readRows.bind(engine);
    const reads: { offset: number; limit: number }[] = [];
    let jobId = '';
    // The job runs once its three requests wait for it, so that the worker sees them as it ends it.
    engine.run = async (request) => {
      while (ctx.deps.queryJobEnds.waiters(jobId) < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      return runQuery(request);
    };
    engine.readRows = (job, columns, range) => {
      reads.push({ offset: range.offset, limit: range.limit });
      return readRows(job, columns, range);
    };
    try {
      const res = await fx.api.post('/api/v1/queries/run', { query_id: id, query_text: text });
      jobId = res.body.job_id as string;
      const [first, within, beyond] = await Promise.all([
        fx.api.get(`/api/v1/query-jobs/${jobId}/results?timeout_ms=30000`),
        fx.api.get(`/api/v1/query-jobs/${jobId}/results?timeout_ms=30000&page=2&page_size=20`),
        fx.api.get(`/api/v1/query-jobs/${jobId}/results?timeout_ms=30000&page=2`),
      ]);
      const ids = (page: { body: { rows: { data: { id: number } }[] } }) => page.body.rows.map((row) => row.data.id);
      const from = (start: number, count: number) => Array.from({ length: count }, (_, i) => start + i);
      expect([first.status, within.status, beyond.status]).toEqual([200, 200, 200]);
      expect(ids(first)).toEqual(from(1, 50));
      expect(ids(within)).toEqual(from(21, 20));
      expect(ids(beyond)).toEqual(from(51, 50));
      // The worker read the first 50 rows for the three requests; the page beyond them was read by its request.
      expect(reads).toEqual([
        { offset: 0, limit: 50 },
        { offset: 50, limit: 50 },
      ]);
      // Read from the warehouse once the job ended, the first page is the same, to its types and schema.
      expect((await fx.api.get(`/api/v1/query-jobs/${jobId}/results`)).body).toEqual(first.body);
      expect(reads).toHaveLength(3);
    } finally {
      // The instance's own methods again (from its prototype).
      delete (engine as Partial<typeof engine>).run;
      delete (engine as Partial<typeof engine>).readRows;
    }
  });

  it('refuses a wait that is negative, not a number, or over a minute (422)', async () => {
    const job = await runToEnd({});
    for (const value of ['-1', '60001', 'abc', '1.5', '']) {
      const res = await fx.api.get(`/api/v1/query-jobs/${job.id}/results?timeout_ms=${value}`);
      expect({ value, status: res.status }).toEqual({ value, status: 422 });
    }
  });

  it('wakes a waiter when this process is done with the job, and reads again for a job another process ends', async () => {
    const ends = new QueryJobEnds();
    let status = 'RUNNING';
    let reads = 0;
    const read = () => {
      reads += 1;
      return Promise.resolve(status);
    };
    const woken = ends.until('job-1', 30_000, read, (value) => value === 'DONE');
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = 'DONE';
    ends.ended('job-1');
    expect(await woken).toBe('DONE');
    expect(reads).toBe(2);
    // No wake-up (another process's worker): seen when read again.
    status = 'RUNNING';
    const elsewhere = ends.until('job-2', 30_000, read, (value) => value === 'DONE');
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = 'DONE';
    expect(await elsewhere).toBe('DONE');
    // Out of time: the last read.
    status = 'RUNNING';
    expect(await ends.until('job-3', 50, read, (value) => value === 'DONE')).toBe('RUNNING');
    // The row the worker wrote, handed over: taken without reading again, when it is the one waited for.
    reads = 0;
    const accept = (row: unknown) => (typeof row === 'string' ? row : undefined);
    const handedOver = ends.until('job-4', 30_000, read, (value) => value === 'DONE', accept);
    await new Promise((resolve) => setTimeout(resolve, 20));
    ends.ended('job-4', 'DONE');
    expect({ value: await handedOver, reads }).toEqual({ value: 'DONE', reads: 1 });
    // A row that does not end the wait (not this job's, as `handed` tells) is read again.
    const refusedRow = ends.until(
      'job-5',
      30_000,
      read,
      (value) => value === 'DONE',
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = 'DONE';
    ends.ended('job-5', 'DONE');
    expect({ value: await refusedRow, reads }).toEqual({ value: 'DONE', reads: 3 });
  });
});

it("answers 404 for another tenant's query when setting a limit, whatever the limit", async () => {
  const other = await seedTenant(ctx, 'Other');
  const res = await as(ctx.app, other.editor.token).post('/api/v1/queries/run', {
    query_id: queryId,
    query_text: TEXT,
    maximum_bytes_billed: '10485760',
    timeout_seconds: 5,
  });
  expect(res.status).toBe(404);
});
