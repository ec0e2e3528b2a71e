/**
 * POST /api/v1/query-jobs/{job_id}/cancel on DuckDB: a RUNNING query is interrupted by the worker
 * running it and ends CANCELLED, charged what it read (as BigQuery charges a cancelled job); a
 * PENDING job is CANCELLED at once and never runs; who may cancel, another tenant's job (404),
 * ended jobs (409), a second cancel. (BigQuery's jobs.cancel: bigquery.test.ts; kill -9 during a
 * cancel: processes.test.ts.)
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { finished, queryFixture, type QueryFixture, runToEnd } from './helpers.js';

let ctx: TestContext;
let fx: QueryFixture;
let other: QueryFixture;

const MIN_BILLED = 10 * 2 ** 20;
// Four billion rows over the table's ten: minutes of work, unless it is stopped.
const HEAVY =
  'SELECT sum(n) AS total FROM sales.nums, (SELECT unnest(range(20000)) AS a) x, (SELECT unnest(range(20000)) AS b) y WHERE a + b >= 0';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  fx = await queryFixture(ctx, 'Canceller');
  const nums = await fx.table('nums', [{ name: 'n', type: 'INT64' }]);
  await fx.fill(nums, 'INSERT INTO {table} SELECT range FROM range(10)');
  other = await queryFixture(ctx, 'Other');
}, 60_000);

afterAll(() => ctx?.close());

/** Saves and runs `text` as `token`'s user; the job's id. */
async function run(text: string, token = fx.tenant.editor.token): Promise<string> {
  const queryId = await fx.query(text, token);
  const res = await as(ctx.app, token).post('/api/v1/queries/run', { query_id: queryId, query_text: text });
  expect(res.status).toBe(202);
  return res.body.job_id as string;
}

async function until(jobId: string, status: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = (await fx.api.get(`/api/v1/query-jobs/${jobId}`)).body;
    if (job.status === status) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cancel = (jobId: string, token = fx.tenant.editor.token) => as(ctx.app, token).post(`/api/v1/query-jobs/${jobId}/cancel`);

describe('cancelling', () => {
  it('stops a RUNNING query: the job ends CANCELLED, charged the bytes it reads', async () => {
    const jobId = await run(HEAVY);
    await until(jobId, 'RUNNING');
    const asked = await cancel(jobId);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ id: jobId, status: expect.stringMatching(/^(RUNNING|CANCELLED)$/) });
    const job = await finished(ctx, fx.tenant.editor.token, jobId);
    expect(job).toMatchObject({
      status: 'CANCELLED',
      error_result: { reason: 'stopped', message: 'The job was cancelled' },
      error_details: { errors: [{ reason: 'stopped', message: 'The job was cancelled' }] },
      // Its one column of ten INT64 values; billed the table's minimum.
      total_bytes_processed: 80,
      total_bytes_billed: MIN_BILLED,
      total_rows: null,
    });
    expect(job.ended).not.toBeNull();
    const history = (await as(ctx.app, fx.tenant.admin.token).get('/api/v1/quota/cost-history')).body.items;
    expect(history).toContainEqual(expect.objectContaining({ bytes_processed: 80, bytes_billed: MIN_BILLED }));
    expect((await fx.api.get(`/api/v1/query-jobs/${jobId}/results`)).status).toBe(409);
    // A second cancel answers the same.
    const again = await cancel(jobId);
    expect({ status: again.status, job: again.body.status }).toEqual({ status: 202, job: 'CANCELLED' });
  });

  it('cancels a PENDING job at once: it never runs and costs nothing', async () => {
    // The tenant's one place is taken (COLLAB_QUERY_CONCURRENCY_PER_TENANT=1): the second job waits.
    const running = await run(HEAVY);
    await until(running, 'RUNNING');
    const waiting = await run('SELECT 1 AS one');
    expect((await fx.api.get(`/api/v1/query-jobs/${waiting}`)).body.status).toBe('PENDING');
    const asked = await cancel(waiting);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ id: waiting, status: 'CANCELLED', started: null, error_result: { reason: 'stopped' } });
    expect((await cancel(running)).status).toBe(202);
    await until(running, 'CANCELLED');
    // The worker takes the waiting job's queue entry, and leaves it alone.
    const next = await runToEnd(ctx, fx, fx.tenant, 'SELECT 2 AS two');
    expect(next.status).toBe('DONE');
    expect((await fx.api.get(`/api/v1/query-jobs/${waiting}`)).body).toMatchObject({
      status: 'CANCELLED',
      started: null,
      total_bytes_billed: null,
    });
    expect(await ctx.db.queryCost.count({ where: { queryJobId: waiting } })).toBe(0);
  });

  it('lets the user who ran the job and Org admins cancel it; others of the tenant get 403, other tenants 404', async () => {
    const done = await run('SELECT 1 AS one');
    await until(done, 'DONE');
    // Who may is decided before the state: the others are told so even for an ended job.
    expect((await cancel(done, fx.tenant.user.token)).status).toBe(403);
    expect((await cancel(done, other.tenant.admin.token)).status).toBe(404);
    expect((await cancel('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await cancel('not-a-uuid')).status).toBe(422);
    const ended = await cancel(done, fx.tenant.admin.token);
    expect({ status: ended.status, detail: ended.body.detail }).toEqual({
      status: 409,
      detail: 'The job has already ended: it is DONE',
    });
    const failed = await run('SELECT * FROM nowhere.nothing');
    await until(failed, 'FAILED');
    expect((await cancel(failed)).body.detail).toBe('The job has already ended: it is FAILED');
    // An Org admin cancels a job another user ran.
    const heavy = await run(HEAVY, fx.tenant.user.token);
    await until(heavy, 'RUNNING');
    expect((await cancel(heavy, fx.tenant.editor.token)).status).toBe(403);
    expect((await cancel(heavy, fx.tenant.admin.token)).status).toBe(202);
    await until(heavy, 'CANCELLED');
  });
});
