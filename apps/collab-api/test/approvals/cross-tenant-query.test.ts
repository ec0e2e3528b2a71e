/**
 * End to end through the real approval flow: a query of tenant A's project reading tenant B's
 * dataset is refused before the requests are approved, allowed after (B's private columns masked
 * for A), and refused again once the association is removed. The invited tenant's users run
 * queries in the project too, as their own tenant, until the invitation ends.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { finished, ownerAndSharer, type QueryFixture } from '../query-jobs/helpers.js';
import { approveAs, datasetRequest, inviteRequest } from './helpers.js';

let ctx: TestContext;
let owner: QueryFixture;
let sharer: QueryFixture;

const SHARED = 'SELECT name, salary, team FROM hr.people ORDER BY name';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  ({ owner, sharer } = await ownerAndSharer(ctx, {
    orders: "INSERT INTO {table} VALUES ('ada', 0.5)",
    people: "INSERT INTO {table} VALUES ('ada', 100, 'x'), ('bob', 200, 'y')",
  }));
}, 60_000);

afterAll(() => ctx?.close());

/** Saves and runs `text` in the owner's project as `token`'s user; the ended job and, when done, its first page. */
async function run(text: string, token = owner.tenant.editor.token) {
  const saved = await as(ctx.app, token).post('/api/v1/queries', { query_text: text, project_id: owner.projectId });
  expect(saved.status).toBe(201);
  const started = await as(ctx.app, token).post('/api/v1/queries/run', { query_id: saved.body.id, query_text: text });
  expect(started.status).toBe(202);
  const job = await finished(ctx, token, started.body.job_id);
  const page = job.status === 'DONE' ? (await as(ctx.app, token).get(`/api/v1/query-jobs/${job.id}/results`)).body : null;
  return { job, page, query: saved.body };
}

it('refuses the query before approval, allows it after with private columns masked, and refuses it once removed', async () => {
  const before = await run(SHARED);
  expect(before.job.status).toBe('FAILED');
  expect(before.job.error_result.message).toEqual(expect.any(String));

  // The project's tenant asks B in, then asks for B's dataset; B's Org admin approves both.
  await approveAs(ctx, sharer.tenant.admin, await inviteRequest(ctx, owner.tenant.user, owner.projectId, sharer.tenant.id));
  // Invited, but the dataset is not shared yet: still refused.
  expect((await run(SHARED)).job.status).toBe('FAILED');
  await approveAs(ctx, sharer.tenant.admin, await datasetRequest(ctx, owner.tenant.user, owner.projectId, sharer.datasetId));

  const after = await run(SHARED);
  expect({ status: after.job.status, error: after.job.error_result }).toEqual({ status: 'DONE', error: null });
  expect(after.page.column_privacy).toEqual({ name: 'public', salary: 'private', team: 'public' });
  expect(after.page.rows.map((row: { data: object }) => row.data)).toEqual([
    { name: 'ada', salary: null, team: 'x' },
    { name: 'bob', salary: null, team: 'y' },
  ]);
  expect(after.job.private_row_count).toBe(2);

  // The invited tenant's users run queries in the project as their own tenant: B's columns are
  // B's own there, and A's private column is masked for them.
  const invited = await run(
    'SELECT p.name, p.salary, o.margin FROM hr.people p JOIN sales.orders o ON o.person = p.name',
    sharer.tenant.editor.token,
  );
  expect({ status: invited.job.status, tenant: invited.job.tenant_id, queryTenant: invited.query.tenant_id }).toEqual({
    status: 'DONE',
    tenant: sharer.tenant.id,
    queryTenant: sharer.tenant.id,
  });
  expect(invited.page.column_privacy).toEqual({ name: 'public', salary: 'public', margin: 'private' });
  expect(invited.page.rows.map((row: { data: object }) => row.data)).toEqual([{ name: 'ada', salary: 100, margin: null }]);

  // The dataset's Org admin takes it out: refused again at once.
  await as(ctx.app, sharer.tenant.admin.token)
    .delete(`/api/v1/projects/${owner.projectId}/shared-datasets/${sharer.datasetId}`)
    .expect(204);
  const removed = await run(SHARED);
  expect(removed.job.status).toBe('FAILED');

  // Ending the invitation shuts the invited tenant out of the project altogether.
  await as(ctx.app, owner.tenant.admin.token)
    .delete(`/api/v1/projects/${owner.projectId}/tenants/${sharer.tenant.id}`)
    .expect(204);
  const text = 'SELECT 1 AS one';
  const refused = await as(ctx.app, sharer.tenant.editor.token).post('/api/v1/queries', {
    query_text: text,
    project_id: owner.projectId,
  });
  expect(refused.status).toBe(404);
  const again = await as(ctx.app, sharer.tenant.editor.token).post('/api/v1/queries/run', {
    query_id: invited.query.id,
    query_text: invited.query.query_text,
  });
  expect(again.status).toBe(404);
});
