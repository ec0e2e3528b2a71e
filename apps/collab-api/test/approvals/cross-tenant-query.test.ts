/**
 * End to end through the real approval flow: a query of tenant A's project reading tenant B's
 * dataset is refused before the requests are approved, allowed after (B's private columns masked
 * for A), and refused again once the association is removed. The invited tenant's users run
 * queries in the project too, as their own tenant, until the invitation ends.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { operatorToken } from '../fixtures.js';
import { finished, ownerAndSharer, queryFixture, type QueryFixture } from '../query-jobs/helpers.js';
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

/** Saves and runs `text` in the owner's project (or `projectId`) as `token`'s user; the ended job and, when done, its first page. */
async function run(text: string, token = owner.tenant.editor.token, projectId = owner.projectId) {
  const saved = await as(ctx.app, token).post('/api/v1/queries', { query_text: text, project_id: projectId });
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
  // And it sees the schema (private flags, rules) of the project's datasets whose rules bind it, never their data.
  const schemaOf = async () => {
    const listed = await as(ctx.app, sharer.tenant.editor.token).get(`/api/v1/datasets/${owner.datasetId}/tables`);
    if (listed.status !== 200) return listed.status;
    const [orders] = listed.body.tables as { id: string; schema: { name: string; private: boolean }[] }[];
    const one = await as(ctx.app, sharer.tenant.editor.token).get(`/api/v1/tables/${orders!.id}`).expect(200);
    return one.body.schema.map((field: { name: string; private: boolean }) => [field.name, field.private]);
  };
  expect(await schemaOf()).toEqual([
    ['person', false],
    ['margin', true],
  ]);

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
  expect(await schemaOf()).toBe(404);
  const again = await as(ctx.app, sharer.tenant.editor.token).post('/api/v1/queries/run', {
    query_id: invited.query.id,
    query_text: invited.query.query_text,
  });
  expect(again.status).toBe(404);
});

it('once the operator deletes a tenant, nobody reaches its projects or shared data, and its pending requests are void', async () => {
  const stayer = await queryFixture(ctx, 'Stayer', 'sales');
  const leaver = await queryFixture(ctx, 'Leaver', 'crm');
  const contacts = await leaver.table('contacts', [{ name: 'email', type: 'STRING' }]);
  await leaver.fill(contacts, "INSERT INTO {table} VALUES ('ada@example.com')");
  // Stayer invites Leaver and gets its dataset; Leaver invites Stayer into its own project.
  await approveAs(ctx, leaver.tenant.admin, await inviteRequest(ctx, stayer.tenant.user, stayer.projectId, leaver.tenant.id));
  await approveAs(ctx, leaver.tenant.admin, await datasetRequest(ctx, stayer.tenant.user, stayer.projectId, leaver.datasetId));
  await approveAs(ctx, stayer.tenant.admin, await inviteRequest(ctx, leaver.tenant.user, leaver.projectId, stayer.tenant.id));
  // Still pending when Leaver goes: a request to add Stayer's dataset to Leaver's project.
  const pending = await datasetRequest(ctx, leaver.tenant.user, leaver.projectId, stayer.datasetId);
  const stayerApi = as(ctx.app, stayer.tenant.admin.token);
  const read = () => run('SELECT email FROM crm.contacts', stayer.tenant.editor.token, stayer.projectId);
  expect((await read()).job.status).toBe('DONE');
  await stayerApi.get(`/api/v1/projects/${leaver.projectId}`).expect(200);

  await as(ctx.app, operatorToken(ctx)).delete(`/api/v1/tenants/${leaver.tenant.id}`).expect(204);

  const after = await read();
  expect({ status: after.job.status, reason: after.job.error_result?.reason }).toEqual({
    status: 'FAILED',
    reason: 'accessDenied',
  });
  await stayerApi.get(`/api/v1/projects/${leaver.projectId}`).expect(404);
  await stayerApi.get(`/api/v1/projects/${leaver.projectId}/datasets`).expect(404);
  await stayerApi.get(`/api/v1/datasets/${leaver.datasetId}/tables`).expect(404);
  const listed = (await stayerApi.get('/api/v1/projects').expect(200)).body.projects.map((project: { id: string }) => project.id);
  expect(listed).not.toContain(leaver.projectId);
  const awaiting = (await stayerApi.get('/api/v1/approval/pending').expect(200)).body;
  expect(awaiting.project_dataset_approvals.map((request: { id: string }) => request.id)).not.toContain(pending);
  const approved = await stayerApi.post(`/api/v1/approval/${pending}/approve`);
  expect({ status: approved.status, message: approved.body.detail }).toEqual({
    status: 409,
    message: 'The organisation that asked, or that owns the project, was deleted; the request cannot be approved',
  });
});
