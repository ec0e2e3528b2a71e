import { as, createTestContext, type TestContext } from '../context.js';
import { operatorToken } from '../fixtures.js';
import { finished, queryFixture, type QueryFixture, runToEnd } from './helpers.js';

let ctx: TestContext;

// One USD a MiB (2^20 bytes): a job billed BigQuery's minimum of 10 MiB costs exactly 10 USD.
const PRICE_PER_TIB = String(2 ** 20);
const MIN_BILLED = 10 * 2 ** 20;

beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_PRICE_PER_TIB_USD: PRICE_PER_TIB, COLLAB_DEFAULT_DAILY_QUOTA_USD: '50.5' });
  await ctx.startWorker();
}, 60_000);

afterAll(() => ctx?.close());

async function tenantWithNumbers(name: string): Promise<QueryFixture> {
  const fx = await queryFixture(ctx, name);
  const table = await fx.table('nums', [{ name: 'n', type: 'INT64' }]);
  await fx.fill(table, 'INSERT INTO {table} SELECT range FROM range(10)');
  return fx;
}

const SUM = 'SELECT sum(n) AS total FROM sales.nums';

async function setQuota(fx: QueryFixture, daily: string, monthly = '100000') {
  const res = await as(ctx.app, operatorToken(ctx)).put('/api/v1/quota', {
    tenant_id: fx.tenant.id,
    daily_quota_usd: daily,
    monthly_quota_usd: monthly,
  });
  expect(res.status).toBe(200);
}

describe('quota summary and settings', () => {
  it('shows the default quota to Org admins only', async () => {
    const fx = await queryFixture(ctx, 'Defaults');
    const summary = await as(ctx.app, fx.tenant.admin.token).get('/api/v1/quota/summary');
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      quota: { tenant_id: fx.tenant.id, daily_quota_usd: '50.500000', monthly_quota_usd: '1000.000000' },
      usage: { tenant_id: fx.tenant.id, daily_cost_usd: '0.000000', monthly_cost_usd: '0.000000' },
      daily_remaining_usd: '50.500000',
      monthly_remaining_usd: '1000.000000',
      daily_percentage_used: 0,
      monthly_percentage_used: 0,
      is_daily_quota_exceeded: false,
      is_monthly_quota_exceeded: false,
    });
    expect(summary.body.usage.last_reset_daily).toMatch(/T00:00:00\.000Z$/);
    expect(summary.body.usage.last_reset_monthly).toMatch(/-01T00:00:00\.000Z$/);
    for (const token of [fx.tenant.editor.token, fx.tenant.user.token]) {
      expect((await as(ctx.app, token).get('/api/v1/quota/summary')).status).toBe(403);
      expect((await as(ctx.app, token).get('/api/v1/quota/cost-history')).status).toBe(403);
    }
  });

  it('lets only a platform operator set a quota, with amounts checked', async () => {
    const fx = await queryFixture(ctx, 'Settable');
    const body = { tenant_id: fx.tenant.id, daily_quota_usd: '12.345678', monthly_quota_usd: 99 };
    expect((await as(ctx.app, fx.tenant.admin.token).put('/api/v1/quota', body)).status).toBe(403);
    const set = await as(ctx.app, operatorToken(ctx)).put('/api/v1/quota', body);
    expect(set.body).toMatchObject({ tenant_id: fx.tenant.id, daily_quota_usd: '12.345678', monthly_quota_usd: '99.000000' });
    const operator = as(ctx.app, operatorToken(ctx));
    expect((await operator.put('/api/v1/quota', { ...body, tenant_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(
      404,
    );
    for (const amount of ['-1', '1.1234567', 'abc', '1e3', '', '1\u0000', null, true, -5]) {
      const res = await operator.put('/api/v1/quota', { ...body, daily_quota_usd: amount });
      expect({ amount, status: res.status }).toEqual({ amount, status: 422 });
    }
    expect((await operator.put('/api/v1/quota', { tenant_id: fx.tenant.id, daily_quota_usd: '1' })).status).toBe(422);
  });
});

describe('costs', () => {
  it('charges each job its bytes billed, at least 10 MB per table, in the cost history and the UTC day and month', async () => {
    const fx = await tenantWithNumbers('Costs');
    await setQuota(fx, '1000');
    const job = await runToEnd(ctx, fx, fx.tenant, SUM);
    expect(job).toMatchObject({ status: 'DONE', total_bytes_processed: 80, total_bytes_billed: MIN_BILLED });
    await runToEnd(ctx, fx, fx.tenant, 'SELECT count(*) AS c FROM sales.nums');
    const admin = as(ctx.app, fx.tenant.admin.token);
    const history = await admin.get('/api/v1/quota/cost-history');
    expect(history.body).toMatchObject({ total: 2, page: 1, page_size: 20 });
    // Newest first; count(*) reads no column, and is billed the table's minimum all the same.
    expect(history.body.items).toEqual([
      expect.objectContaining({ bytes_processed: 0, bytes_billed: MIN_BILLED, cost_usd: '10.000000', tenant_id: fx.tenant.id }),
      expect.objectContaining({ bytes_processed: 80, bytes_billed: MIN_BILLED, cost_usd: '10.000000', query_id: job.query_id }),
    ]);
    expect((await admin.get('/api/v1/quota/cost-history?page=2&page_size=1')).body.items).toHaveLength(1);
    expect((await admin.get('/api/v1/quota/cost-history?page=3&page_size=1')).body.items).toEqual([]);
    for (const query of ['?page=0', '?page_size=0', '?page_size=101', '?page=x']) {
      expect({ query, status: (await admin.get(`/api/v1/quota/cost-history${query}`)).status }).toEqual({ query, status: 422 });
    }
    const summary = await admin.get('/api/v1/quota/summary');
    expect(summary.body).toMatchObject({
      usage: { daily_cost_usd: '20.000000', monthly_cost_usd: '20.000000' },
      daily_remaining_usd: '980.000000',
      daily_percentage_used: 2,
    });
    // A new UTC day starts the daily usage again; the month keeps counting.
    const yesterday = new Date(Date.parse(summary.body.usage.last_reset_daily) - 86_400_000);
    await ctx.db.queryUsage.update({ where: { tenantId: fx.tenant.id }, data: { lastResetDaily: yesterday } });
    const nextDay = (await admin.get('/api/v1/quota/summary')).body;
    expect(nextDay.usage.daily_cost_usd).toBe('0.000000');
    expect(nextDay.usage.last_reset_daily).toBe(summary.body.usage.last_reset_daily);
    // A job charged on the new day counts from 0 for the day and on top of the month.
    await runToEnd(ctx, fx, fx.tenant, SUM);
    expect((await admin.get('/api/v1/quota/summary')).body.usage).toMatchObject({
      daily_cost_usd: '10.000000',
      monthly_cost_usd: '30.000000',
      last_reset_daily: summary.body.usage.last_reset_daily,
    });
    expect((await ctx.db.queryUsage.findUniqueOrThrow({ where: { tenantId: fx.tenant.id } })).lastResetDaily.toISOString()).toBe(
      summary.body.usage.last_reset_daily,
    );
  });

  it('bills heavy compute over no table, and each table a query reads, at least the minimum', async () => {
    const fx = await tenantWithNumbers('Minimums');
    await setQuota(fx, '1000');
    const other = await fx.table('other', [{ name: 'label', type: 'STRING' }]);
    await fx.fill(other, "INSERT INTO {table} VALUES ('a'), ('bb')");
    // Four million rows of cross join, no table: it used to cost nothing.
    const compute = await runToEnd(
      ctx,
      fx,
      fx.tenant,
      'SELECT count(*) AS n FROM (SELECT unnest(range(2000)) AS a) x, (SELECT unnest(range(2000)) AS b) y',
    );
    expect(compute).toMatchObject({ status: 'DONE', total_bytes_processed: 0, total_bytes_billed: MIN_BILLED, total_rows: 1 });
    // Two tables (one of them named twice): two minimums; their bytes read stay what they were.
    const two = await runToEnd(
      ctx,
      fx,
      fx.tenant,
      "SELECT count(*) AS n FROM sales.nums a, sales.nums b, sales.other o WHERE o.label <> ''",
    );
    expect(two).toMatchObject({ status: 'DONE', total_bytes_processed: 7, total_bytes_billed: 2 * MIN_BILLED });
    const summary = (await as(ctx.app, fx.tenant.admin.token).get('/api/v1/quota/summary')).body;
    expect(summary.usage.daily_cost_usd).toBe('30.000000');
  });

  it('refuses runs with 429 once the quota is used up', async () => {
    const fx = await tenantWithNumbers('Refused');
    await setQuota(fx, '15');
    expect((await runToEnd(ctx, fx, fx.tenant, SUM)).status).toBe('DONE');
    expect((await runToEnd(ctx, fx, fx.tenant, SUM)).status).toBe('DONE');
    const queryId = await fx.query(SUM);
    const refused = await fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: SUM });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/daily query cost quota/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const summary = await as(ctx.app, fx.tenant.admin.token).get('/api/v1/quota/summary');
    expect(summary.body).toMatchObject({
      is_daily_quota_exceeded: true,
      daily_remaining_usd: '0.000000',
      daily_percentage_used: 133.33,
    });
    // Raising the quota lets runs through again.
    await setQuota(fx, '1000');
    expect((await fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: SUM })).status).toBe(202);
  });

  it('lets concurrent runs overspend by at most one job’s cost (a tenant’s jobs start one at a time)', async () => {
    const fx = await tenantWithNumbers('Concurrent');
    await setQuota(fx, '15');
    const queryId = await fx.query(SUM);
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: SUM })),
    );
    // Each was accepted while nothing had been spent yet.
    expect(runs.map((run) => run.status)).toEqual(Array(8).fill(202));
    const jobs = await Promise.all(runs.map((run) => finished(ctx, fx.tenant.editor.token, run.body.job_id)));
    const done = jobs.filter((job) => job.status === 'DONE');
    const refused = jobs.filter((job) => job.status === 'FAILED');
    expect(done.length + refused.length).toBe(8);
    expect(refused.every((job) => job.error_result.reason === 'quotaExceeded')).toBe(true);
    const summary = (await as(ctx.app, fx.tenant.admin.token).get('/api/v1/quota/summary')).body;
    const spent = Number(summary.usage.daily_cost_usd);
    expect(spent).toBe(done.length * 10);
    // Each job starts only while the quota is not reached: 10 + 10 = 20 ≤ 15 + one job (10).
    expect(spent).toBeLessThanOrEqual(15 + 10);
    expect(done).toHaveLength(2);
  });
});
