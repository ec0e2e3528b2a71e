/**
 * Stored results expire COLLAB_RESULT_TTL_DAYS after their job ended: the job shows when, and
 * from then on its pages, new exports and download links answer 410; the worker's sweep then
 * deletes the stored rows and the exports' files, ten seconds after the expiry, never under an
 * export that waits or runs, and as often as it is run without harm. (Killed in the middle of a
 * sweep: test/query-jobs/processes.test.ts.)
 */
import request from 'supertest';
import { deleteExpiredResults } from '../../src/query-jobs/expiry.js';
import { runExportJob } from '../../src/exports/job.js';
import { createTestContext, type TestContext } from '../context.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';
import { exportJob, queryFixture, type QueryFixture, runToEnd } from './helpers.js';

const DAY_MS = 86_400_000;

let ctx: TestContext;
let fx: QueryFixture;
let realNow: () => Date;

beforeAll(async () => {
  // The worker's own sweep runs once, at its start: the tests run theirs at the times they choose.
  ctx = await createTestContext({ COLLAB_RESULT_TTL_DAYS: '3', COLLAB_RESULT_SWEEP_INTERVAL_SECONDS: '0' });
  realNow = ctx.deps.now;
  await ctx.startWorker();
  fx = await queryFixture(ctx);
  const orders = await fx.table('orders', [
    { name: 'id', type: 'INT64' },
    { name: 'label', type: 'STRING' },
  ]);
  await fx.fill(orders, "INSERT INTO {table} SELECT range, 'row ' || range FROM range(10)");
}, 60_000);

afterEach(() => {
  ctx.deps.now = realNow;
});

afterAll(() => ctx?.close());

async function storedResultExists(jobId: string): Promise<boolean> {
  const catalog = await openWarehouseCatalog(ctx.dataDir);
  try {
    await catalog.run(`SELECT 1 FROM collab_results.r_${jobId.replaceAll('-', '_')} LIMIT 1`);
    return true;
  } catch {
    return false;
  } finally {
    catalog.close();
  }
}

async function objectExists(key: string): Promise<boolean> {
  return ctx.deps.storage.open(key).then(
    (opened) => {
      opened.stream.destroy();
      return true;
    },
    () => false,
  );
}

async function doneJob() {
  const job = await runToEnd(ctx, fx, fx.tenant, 'SELECT id, label FROM sales.orders ORDER BY id');
  expect(job.status).toBe('DONE');
  return job as { id: string; ended: string; results_expire_at: string };
}

describe('expired results', () => {
  it('shows when they expire, then answers 410 for pages, exports and download links, and deletes rows and files', async () => {
    const job = await doneJob();
    expect(Date.parse(job.results_expire_at) - Date.parse(job.ended)).toBe(3 * DAY_MS);
    const exported = await exportJob(ctx, fx, job.id, 'CSV', 'NONE');
    expect(exported.status).toBe('DONE');
    const link = await fx.api.get(`/api/v1/exports/${exported.id}/download-url`);
    const signed = new URL(link.body.url);
    const key = String(exported.storage_path);
    expect(await objectExists(key)).toBe(true);

    const expiry = Date.parse(job.results_expire_at);
    ctx.deps.now = () => new Date(expiry - 1);
    expect((await fx.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(200);

    ctx.deps.now = () => new Date(expiry);
    const gone = { detail: `The job's results expired at ${job.results_expire_at} and were deleted: run the query again` };
    for (const res of [
      await fx.api.get(`/api/v1/query-jobs/${job.id}/results`),
      await fx.api.get(`/api/v1/query-jobs/${job.id}/results?page=2&page_size=5`),
      await fx.api.post(`/api/v1/query-jobs/${job.id}/exports`, { format: 'JSON' }),
      await fx.api.get(`/api/v1/exports/${exported.id}/download-url`),
      await request(ctx.app).get(`${signed.pathname}${signed.search}`),
    ]) {
      expect({ status: res.status, body: res.body }).toEqual({ status: 410, body: gone });
    }
    // The records stay.
    expect((await fx.api.get(`/api/v1/query-jobs/${job.id}`)).body).toMatchObject({ status: 'DONE', total_rows: 10 });
    expect((await fx.api.get(`/api/v1/exports/${exported.id}`)).body).toMatchObject({ status: 'DONE' });

    // Within ten seconds of the expiry nothing is deleted yet (a request that read the time just before may be reading).
    ctx.deps.now = () => new Date(expiry + 9_000);
    expect(await deleteExpiredResults(ctx.deps)).toBe(0);
    expect(await storedResultExists(job.id)).toBe(true);

    ctx.deps.now = () => new Date(expiry + 11_000);
    expect(await deleteExpiredResults(ctx.deps)).toBe(1);
    expect(await storedResultExists(job.id)).toBe(false);
    expect(await objectExists(key)).toBe(false);
    expect((await ctx.db.queryJob.findUniqueOrThrow({ where: { id: job.id } })).resultsDeletedAt).not.toBeNull();
    expect((await fx.api.get(`/api/v1/exports/${exported.id}`)).body).toMatchObject({ status: 'DONE', storage_path: null });
    expect((await fx.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(410);
    // A link handed out before still says why, once the file is gone too.
    for (const res of [
      await fx.api.get(`/api/v1/exports/${exported.id}/download-url`),
      await request(ctx.app).get(`${signed.pathname}${signed.search}`),
    ]) {
      expect({ status: res.status, body: res.body }).toEqual({ status: 410, body: gone });
    }
    // Again: nothing more to do.
    expect(await deleteExpiredResults(ctx.deps)).toBe(0);
  });

  it('leaves results that have not expired, and those of jobs that never stored one', async () => {
    const kept = await doneJob();
    const failed = await runToEnd(ctx, fx, fx.tenant, 'SELECT nope FROM sales.orders');
    expect(failed).toMatchObject({ status: 'FAILED', results_expire_at: null });
    ctx.deps.now = () => new Date(Date.parse(kept.results_expire_at) - 1);
    await deleteExpiredResults(ctx.deps);
    expect(await storedResultExists(kept.id)).toBe(true);
    expect((await fx.api.get(`/api/v1/query-jobs/${kept.id}/results`)).body.total_rows).toBe(10);
  });

  it('waits for an export that waits or runs, which then fails by itself once it sees the expiry', async () => {
    const job = await doneJob();
    const pending = await ctx.db.queryExport.create({
      data: { tenantId: fx.tenant.id, queryJobId: job.id, status: 'PENDING', format: 'CSV', compression: 'NONE' },
    });
    ctx.deps.now = () => new Date(Date.parse(job.results_expire_at) + 11_000);
    await deleteExpiredResults(ctx.deps);
    expect(await storedResultExists(job.id)).toBe(true);

    await runExportJob(ctx.deps, pending.id);
    expect((await fx.api.get(`/api/v1/exports/${pending.id}`)).body).toMatchObject({
      status: 'FAILED',
      error_message: expect.stringMatching(/^The job's results expired at /),
      storage_path: null,
    });
    expect(await deleteExpiredResults(ctx.deps)).toBeGreaterThanOrEqual(1);
    expect(await storedResultExists(job.id)).toBe(false);
  });
});

describe('COLLAB_RESULT_TTL_DAYS=0', () => {
  let zero: TestContext;
  beforeAll(async () => {
    zero = await createTestContext({ COLLAB_RESULT_TTL_DAYS: '0', COLLAB_RESULT_SWEEP_INTERVAL_SECONDS: '0' });
    await zero.startWorker();
  }, 60_000);
  afterAll(() => zero?.close());

  it('expires a result as soon as its job ends: the job is DONE, its pages and exports are gone (410)', async () => {
    const fixture = await queryFixture(zero, 'Zero');
    const job = await runToEnd(zero, fixture, fixture.tenant, 'SELECT 1 AS one');
    expect(job).toMatchObject({ status: 'DONE', total_rows: 1, results_expire_at: job.ended });
    expect((await fixture.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(410);
    expect((await fixture.api.post(`/api/v1/query-jobs/${job.id}/exports`, {})).status).toBe(410);
  });
});
