/**
 * GET /api/v1/approval/pending lists only what a reviewer can still decide: a request into a
 * project deleted since (which approving answers 409) is not among them.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { createProject, inviteRequest } from './helpers.js';

let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;

beforeAll(async () => {
  ctx = await createTestContext();
  a = await seedTenant(ctx, 'Acme');
  b = await seedTenant(ctx, 'Globex');
});
afterAll(() => ctx.close());

it('does not list as pending a request into a deleted project, which can only be refused', async () => {
  const projectId = await createProject(ctx, a.admin, 'Short-lived');
  const approvalId = await inviteRequest(ctx, a.admin, projectId, b.id);
  await as(ctx.app, a.admin.token).delete(`/api/v1/projects/${projectId}`).expect(204);

  const approve = await as(ctx.app, b.admin.token).post(`/api/v1/approval/${approvalId}/approve`);
  expect(approve.status).toBe(409);

  const pending = await as(ctx.app, b.admin.token).get('/api/v1/approval/pending').expect(200);
  const ids = (pending.body.project_tenant_approvals as { id: string }[]).map((r) => r.id);
  expect(ids).not.toContain(approvalId);
});
