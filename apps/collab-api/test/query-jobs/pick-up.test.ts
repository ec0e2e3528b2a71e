/**
 * The worker's pick-up of a queued job (src/query-jobs/job.ts), whose reads (the job, its query's
 * project, the project's reach and catalog) and start run side by side: what they find decides
 * the job as it did when they ran one after another.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { finished, queryFixture, type QueryFixture } from './helpers.js';

let ctx: TestContext;
let fx: QueryFixture;

beforeAll(async () => {
  // The worker starts in the tests, once their jobs are queued and changed.
  ctx = await createTestContext();
  fx = await queryFixture(ctx, 'Pickup');
  const orders = await fx.table('orders', [
    { name: 'id', type: 'INT64', mode: 'REQUIRED' },
    { name: 'amount', type: 'FLOAT64' },
  ]);
  await fx.fill(orders, 'INSERT INTO {table} SELECT range, range * 2.0 FROM range(1, 101)');
}, 60_000);

afterAll(() => ctx?.close());

async function queue(fixture: QueryFixture, text: string): Promise<string> {
  const queryId = await fixture.query(text);
  const run = await fixture.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
  expect(run.status).toBe(202);
  return run.body.job_id as string;
}

describe('picking up a queued query job', () => {
  it("fails a job whose project was archived while it waited, uncharged, and runs the others' jobs meanwhile", async () => {
    const gone = await queryFixture(ctx, 'Archived');
    const orphan = await queue(gone, 'SELECT 1 AS one');
    const texts = Array.from({ length: 5 }, (_, i) => `SELECT count(*) + ${i} AS n, sum(amount) AS total FROM sales.orders`);
    const queued = [];
    for (const text of texts) queued.push(await queue(fx, text));
    await ctx.db.project.update({ where: { id: gone.projectId }, data: { archivedAt: new Date() } });
    await ctx.startWorker();

    const failed = await finished(ctx, gone.tenant.editor.token, orphan);
    expect(failed).toMatchObject({
      status: 'FAILED',
      error_result: { reason: 'accessDenied', message: "The query's project is no longer reachable by your tenant" },
      total_bytes_billed: null,
    });
    expect(failed.started).not.toBeNull();
    expect((await gone.api.get(`/api/v1/query-jobs/${orphan}/results`)).status).toBe(409);
    expect(await ctx.db.queryCost.count({ where: { queryJobId: orphan } })).toBe(0);

    for (const [i, jobId] of queued.entries()) {
      const job = await finished(ctx, fx.tenant.editor.token, jobId);
      expect({ i, status: job.status, billed: job.total_bytes_billed > 0 }).toEqual({ i, status: 'DONE', billed: true });
      const page = await as(ctx.app, fx.tenant.editor.token).get(`/api/v1/query-jobs/${jobId}/results`);
      expect(page.body.rows).toEqual([{ data: { n: 100 + i, total: 10100 } }]);
    }
  });

  it("reads the query's project as it is when the worker takes the job", async () => {
    const text = 'SELECT count(*) AS n FROM sales.orders';
    const elsewhere = (await fx.api.post('/api/v1/projects', { name: 'Elsewhere' })).body.id as string;
    const queryId = await fx.query(text);
    expect((await fx.api.patch(`/api/v1/queries/${queryId}`, { project_id: elsewhere })).status).toBe(200);
    // Its new project reads no dataset `sales`.
    const run = await fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
    const job = await finished(ctx, fx.tenant.editor.token, run.body.job_id as string);
    expect({ status: job.status, error: job.error_result }).toEqual({
      status: 'FAILED',
      error: {
        reason: 'accessDenied',
        message: 'Table "sales.orders" is not one this query\'s project may read (or does not exist)',
      },
    });
  });
});
