/**
 * GET /api/v1/approval/mine: the requests the caller made, any role, newest first, in every state
 * (a pending one whose time is up shows expired); nobody else's, another tenant's least of all.
 */
import request from 'supertest';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { createDataset, createProject, datasetRequest, inviteRequest } from './helpers.js';

let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  ctx = await createTestContext();
  a = await seedTenant(ctx, 'Asker');
  b = await seedTenant(ctx, 'Decider');
});
afterAll(() => ctx.close());

const mine = (token: string, query = '') => as(ctx.app, token).get(`/api/v1/approval/mine${query}`);

it("lists the caller's own requests of both kinds, newest first, with their outcome", async () => {
  const first = await createProject(ctx, a.admin, 'First <project>');
  const second = await createProject(ctx, a.admin, 'Second');
  const approved = await inviteRequest(ctx, a.user, first, b.id);
  await as(ctx.app, b.admin.token).post(`/api/v1/approval/${approved}/approve`).expect(200);
  const rejected = await inviteRequest(ctx, a.user, second, b.id);
  await as(ctx.app, b.admin.token).post(`/api/v1/approval/${rejected}/reject`, { rejection_reason: 'Not now' }).expect(200);
  const bDataset = await createDataset(ctx, b.admin, await createProject(ctx, b.admin, 'B data'), 'hr');
  const asked = await datasetRequest(ctx, a.user, first, bDataset);
  // Someone else of the same tenant asks too: not the user's.
  const third = await createProject(ctx, a.admin, 'Third');
  await inviteRequest(ctx, a.editor, third, b.id);

  const res = await mine(a.user.token).expect(200);
  expect(res.body.project_tenant_approvals.map((each: { id: string }) => each.id)).toEqual([rejected, approved]);
  expect(res.body.project_tenant_approvals[0]).toMatchObject({
    status: 'rejected',
    rejection_reason: 'Not now',
    project_name: 'Second',
    tenant_id: b.id,
    tenant_name: 'Decider',
    requested_by: a.user.id,
    reviewed_by: b.admin.id,
  });
  expect(res.body.project_tenant_approvals[1]).toMatchObject({ status: 'approved', project_name: 'First <project>' });
  expect(res.body.project_dataset_approvals).toEqual([
    expect.objectContaining({ id: asked, status: 'pending', dataset_id: bDataset, dataset_name: 'hr' }),
  ]);
  // Paged: skip and limit apply to each list.
  const paged = await mine(a.user.token, '?skip=1&limit=1').expect(200);
  expect(paged.body.project_tenant_approvals.map((each: { id: string }) => each.id)).toEqual([approved]);
  expect(paged.body.project_dataset_approvals).toEqual([]);
  // The deciding tenant's admin made none; the other tenant's requests are not theirs.
  expect((await mine(b.admin.token).expect(200)).body).toEqual({ project_tenant_approvals: [], project_dataset_approvals: [] });
  expect((await mine(a.editor.token).expect(200)).body.project_tenant_approvals).toHaveLength(1);
});

it('shows a pending request whose 15 days are over as expired, before the expiry run marks it', async () => {
  const project = await createProject(ctx, a.admin, 'Late');
  const id = await inviteRequest(ctx, a.admin, project, b.id);
  const now = ctx.deps.now;
  try {
    ctx.deps.now = () => new Date(Date.now() + 15 * DAY_MS);
    const listed = (await mine(a.admin.token).expect(200)).body.project_tenant_approvals;
    expect(listed.find((each: { id: string }) => each.id === id)).toMatchObject({ status: 'expired' });
  } finally {
    ctx.deps.now = now;
  }
  const listed = (await mine(a.admin.token).expect(200)).body.project_tenant_approvals;
  expect(listed.find((each: { id: string }) => each.id === id)).toMatchObject({ status: 'pending' });
});

it('needs a token, and refuses bad paging in the documented error shape', async () => {
  expect((await request(ctx.app).get('/api/v1/approval/mine')).status).toBe(401);
  for (const query of ['?limit=0', '?limit=abc', '?skip=-1', '?limit=100000', '?extra=1', '?limit=1%00']) {
    const res = await mine(a.user.token, query);
    expect({ query, status: res.status }).toEqual({ query, status: 422 });
    expect(Array.isArray(res.body.detail)).toBe(true);
  }
});
