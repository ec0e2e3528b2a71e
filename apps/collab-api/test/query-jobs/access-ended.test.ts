/**
 * Access that ends while a query runs: the owner removes the dataset it shared, or the project's
 * tenant ends the invitation of the tenant running the query. The job then ends FAILED
 * accessDenied, its stored result is dropped, and its tenant gets no page or export of it. The
 * query runs for real on DuckDB; it is held at its end (the engine's answer waits for the test)
 * so that the access ends while it runs, whatever the machine's speed.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { finished, queryFixture, type QueryFixture, shareDataset } from './helpers.js';

let ctx: TestContext;
let consumer: QueryFixture;
let owner: QueryFixture;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  consumer = await queryFixture(ctx, 'Consumer', 'sales');
  owner = await queryFixture(ctx, 'DataOwner', 'hr');
  const people = await owner.table('people', [{ name: 'n', type: 'INT64' }]);
  await owner.fill(people, 'INSERT INTO {table} SELECT range FROM range(10)');
  await shareDataset(ctx, { owner: consumer, sharer: owner });
}, 120_000);
afterAll(() => ctx?.close());

/** Holds the next query's answer until `release()`; `ran` resolves once the query itself has run. */
function holdNextQuery() {
  const engine = ctx.deps.queryEngine;
  const run = engine.run.bind(engine);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ran!: () => void;
  const hasRun = new Promise<void>((resolve) => (ran = resolve));
  engine.run = async (request) => {
    engine.run = run;
    const outcome = await run(request);
    ran();
    await released;
    return outcome;
  };
  return { hasRun, release };
}

async function runHeld(
  client: { post: (path: string, body: object) => Promise<{ status: number; body: { job_id?: string; id?: string } }> },
  projectId: string,
  text: string,
) {
  const saved = await client.post('/api/v1/queries', { query_text: text, project_id: projectId });
  expect(saved.status).toBe(201);
  const held = holdNextQuery();
  const run = await client.post('/api/v1/queries/run', { query_id: saved.body.id!, query_text: text });
  expect(run.status).toBe(202);
  await held.hasRun;
  return { jobId: run.body.job_id!, release: held.release };
}

async function expectNothingHandedOver(token: string, jobId: string) {
  const job = await finished(ctx, token, jobId);
  expect(job).toMatchObject({ status: 'FAILED', error_result: { reason: 'accessDenied' } });
  const client = as(ctx.app, token);
  expect((await client.get(`/api/v1/query-jobs/${jobId}/results`)).status).toBe(409);
  expect((await client.post(`/api/v1/query-jobs/${jobId}/exports`, { format: 'CSV', compression: 'NONE' })).status).toBe(409);
  // The result the query stored is gone from the warehouse too.
  await expect(ctx.deps.queryEngine.readRows(jobId, [], { offset: 0, limit: 1 })).rejects.toThrow();
}

it('fails a job whose shared dataset the owner removed while it ran, handing over no row of it', async () => {
  const { jobId, release } = await runHeld(consumer.api, consumer.projectId, 'SELECT n FROM hr.people ORDER BY n');
  await as(ctx.app, owner.tenant.admin.token)
    .delete(`/api/v1/projects/${consumer.projectId}/shared-datasets/${owner.datasetId}`)
    .expect(204);
  release();
  await expectNothingHandedOver(consumer.tenant.editor.token, jobId);
});

it("fails a job of an invited tenant whose invitation ended while it ran (the project's own data)", async () => {
  const own = await consumer.table('orders', [{ name: 'n', type: 'INT64' }]);
  await consumer.fill(own, 'INSERT INTO {table} SELECT range FROM range(10)');
  // The data owner was invited to the consumer's project when the dataset was shared.
  const guest = as(ctx.app, owner.tenant.editor.token);
  const { jobId, release } = await runHeld(guest, consumer.projectId, 'SELECT n FROM sales.orders ORDER BY n');
  await as(ctx.app, consumer.tenant.admin.token)
    .delete(`/api/v1/projects/${consumer.projectId}/tenants/${owner.tenant.id}`)
    .expect(204);
  release();
  await expectNothingHandedOver(owner.tenant.editor.token, jobId);
});
