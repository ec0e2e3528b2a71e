/**
 * One tenant must not starve the others (the defaults: a worker runs 2 query jobs at once, at most 1
 * of a tenant, in round-robin order between tenants). Asserted on the jobs' order and states, not
 * on times (the figures are bench:query-jobs's).
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { finished, queryFixture, type QueryFixture } from './helpers.js';

let ctx: TestContext;

// A hundred million rows of cross join: long enough that the others are all queued before one ends.
const HEAVY =
  'SELECT count(*) AS n FROM (SELECT unnest(range(10000)) AS a) x, (SELECT unnest(range(10000)) AS b) y WHERE a + b >= 0';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
}, 60_000);

afterAll(() => ctx?.close());

async function runs(fx: QueryFixture, text: string, count: number): Promise<string[]> {
  const queryId = await fx.query(text);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await fx.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
    expect(res.status).toBe(202);
    ids.push(res.body.job_id as string);
  }
  return ids;
}

const jobOf = async (fx: QueryFixture, id: string) => (await fx.api.get(`/api/v1/query-jobs/${id}`)).body;

/** Cancels what is left of `ids`, so that the next test does not wait behind them. */
async function cancelAll(fx: QueryFixture, ids: string[]) {
  for (const id of ids) await as(ctx.app, fx.tenant.admin.token).post(`/api/v1/query-jobs/${id}/cancel`);
  for (const id of ids) await finished(ctx, fx.tenant.editor.token, id);
}

it("runs another tenant's trivial job while one tenant saturates the queue", async () => {
  const busy = await queryFixture(ctx, 'Busy');
  const quiet = await queryFixture(ctx, 'Quiet');
  const heavy = await runs(busy, HEAVY, 6);
  const [trivial] = await runs(quiet, 'SELECT 1 AS one', 1);
  const done = await finished(ctx, quiet.tenant.editor.token, trivial!);
  expect(done).toMatchObject({ status: 'DONE', total_rows: 1 });
  // The busy tenant's jobs run one at a time: most still wait or run.
  const states = await Promise.all(heavy.map(async (id) => (await jobOf(busy, id)).status as string));
  expect(states.filter((status) => status === 'PENDING' || status === 'RUNNING').length).toBeGreaterThanOrEqual(3);
  expect(states.filter((status) => status === 'RUNNING').length).toBeLessThanOrEqual(1);
  await cancelAll(busy, heavy);
});

it('starts waiting jobs in turns between tenants, not in the order they were queued', async () => {
  const [a, b, c] = await Promise.all(['A', 'B', 'C'].map((name) => queryFixture(ctx, `Turns ${name}`)));
  const aJobs = await runs(a!, HEAVY, 4);
  const bJobs = await runs(b!, HEAVY, 2);
  const cJobs = await runs(c!, HEAVY, 1);
  const started = async (fx: QueryFixture, id: string) => {
    const job = await finished(ctx, fx.tenant.editor.token, id, 240_000);
    expect(job.status).toBe('DONE');
    return Date.parse(job.started as string);
  };
  const aStarts = [];
  for (const id of aJobs) aStarts.push(await started(a!, id));
  const bStarts = [await started(b!, bJobs[0]!), await started(b!, bJobs[1]!)];
  const cStart = await started(c!, cJobs[0]!);
  // B's first job took the free place while A's first ran; C's first, queued after all of A's,
  // went before A's third: the queue takes a round of every tenant's waiting jobs before the next.
  expect(bStarts[0]).toBeLessThanOrEqual(aStarts[1]!);
  expect(cStart).toBeLessThanOrEqual(aStarts[2]!);
  expect(bStarts[1]).toBeLessThanOrEqual(aStarts[3]!);
}, 300_000);
