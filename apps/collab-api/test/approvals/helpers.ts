import { as, type TestContext } from '../context.js';
import type { Member } from '../fixtures.js';

export const MISSING = '0195a6c1-0000-7000-8000-000000000000';

export async function createProject(ctx: TestContext, member: Member, name: string): Promise<string> {
  return (await as(ctx.app, member.token).post('/api/v1/projects', { name }).expect(201)).body.id as string;
}

export async function createDataset(ctx: TestContext, member: Member, projectId: string, name: string): Promise<string> {
  return (await as(ctx.app, member.token).post('/api/v1/datasets', { name, project_id: projectId }).expect(201)).body
    .id as string;
}

/** Asks `tenantId` into the project, as `member`; answers the request's id. */
export async function inviteRequest(ctx: TestContext, member: Member, projectId: string, tenantId: string): Promise<string> {
  const res = await as(ctx.app, member.token).post('/api/v1/approval/project-tenant', {
    project_id: projectId,
    tenant_id: tenantId,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

export async function datasetRequest(ctx: TestContext, member: Member, projectId: string, datasetId: string): Promise<string> {
  const res = await as(ctx.app, member.token).post('/api/v1/approval/project-dataset', {
    project_id: projectId,
    dataset_id: datasetId,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

export async function approveAs(ctx: TestContext, admin: Member, approvalId: string): Promise<void> {
  await as(ctx.app, admin.token).post(`/api/v1/approval/${approvalId}/approve`).expect(200, {});
}

/** Invites `tenant` (as `admin` of it, approving) into the project of `owner`. */
export async function invite(ctx: TestContext, owner: Member, projectId: string, tenant: { id: string; admin: Member }) {
  await approveAs(ctx, tenant.admin, await inviteRequest(ctx, owner, projectId, tenant.id));
}

/** Waits (without a fixed sleep) until `check` holds, for at most `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
