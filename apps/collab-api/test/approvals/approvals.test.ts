/**
 * Approval requests over HTTP: their life (pending, approved, rejected, expired), every refusal,
 * who sees and decides them, the associations they make and what those open up, the association
 * routes, expiry by an injected clock, and invalid input.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import PostalMime from 'postal-mime';
import request from 'supertest';
import { EXPIRY_INTERVAL_SECONDS, startApprovalExpiry } from '../../src/approvals/expiry.js';
import { readableDatasets } from '../../src/associations/access.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import {
  approveAs,
  createDataset,
  createProject,
  datasetRequest,
  eventually,
  invite,
  inviteRequest,
  MISSING,
} from './helpers.js';

const INTERNAL_TOKEN = 'internal-token-for-tests-0123456789';
const DAY_MS = 86_400_000;

let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;
let c: TenantFixture;
const realNow = () => new Date();

beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_INTERNAL_TOKEN: INTERNAL_TOKEN, COLLAB_PUBLIC_UI_URL: 'https://ui.example.com' });
  // E-mails are sent as requests are made, throughout.
  await ctx.startWorker();
  a = await seedTenant(ctx, 'Acme');
  b = await seedTenant(ctx, 'Globex');
  c = await seedTenant(ctx, 'Initech');
});
afterAll(() => ctx.close());
afterEach(() => {
  ctx.deps.now = realNow;
});

const client = (member: { token: string }) => as(ctx.app, member.token);

describe('a project-tenant request', () => {
  let projectId: string;
  let approvalId: string;

  beforeAll(async () => {
    projectId = await createProject(ctx, a.admin, 'Shared analytics');
  });

  it('is made by any role of the project tenant, addressed to the invited tenant, for 15 days', async () => {
    const res = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      status: 'pending',
      requested_by: a.user.id,
      reviewed_by: null,
      created_at: expect.any(String),
      expires_at: expect.any(String),
      reviewed_at: null,
      rejection_reason: null,
      project_id: projectId,
      project_name: 'Shared analytics',
      requester_name: 'user',
      requester_email: a.user.email,
      tenant_id: b.id,
      tenant_name: 'Globex',
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(15 * DAY_MS);
    approvalId = res.body.id;
  });

  it('refuses a second request while one is pending', async () => {
    const res = await client(a.editor).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('A pending request for this association already exists');
  });

  it('is listed as pending to the invited tenant’s Org admins only', async () => {
    const pending = await client(b.admin).get('/api/v1/approval/pending').expect(200);
    expect(pending.body.project_dataset_approvals).toEqual([]);
    expect(pending.body.project_tenant_approvals).toEqual([expect.objectContaining({ id: approvalId, status: 'pending' })]);
    for (const other of [a.admin, c.admin]) {
      expect((await client(other).get('/api/v1/approval/pending').expect(200)).body.project_tenant_approvals).toEqual([]);
    }
    for (const member of [b.editor, b.user]) await client(member).get('/api/v1/approval/pending').expect(403);
  });

  it('shows its details to Org admins of both tenants, 404 to other tenants and 403 to other roles', async () => {
    const details = await client(b.admin).get(`/api/v1/approval/${approvalId}`).expect(200);
    expect(details.body).toEqual({
      approval: expect.objectContaining({ id: approvalId, status: 'pending', requested_by: a.user.id }),
      project_tenant_details: {
        project_id: projectId,
        project_name: 'Shared analytics',
        requester_name: 'user',
        requester_email: a.user.email,
        tenant_id: b.id,
        tenant_name: 'Globex',
      },
      project_dataset_details: null,
    });
    expect((await client(a.admin).get(`/api/v1/approval/${approvalId}`).expect(200)).body).toEqual(details.body);
    await client(c.admin).get(`/api/v1/approval/${approvalId}`).expect(404);
    await client(a.user).get(`/api/v1/approval/${approvalId}`).expect(403);
    await client(b.editor).get(`/api/v1/approval/${approvalId}`).expect(403);
    await client(b.admin).get(`/api/v1/approval/${MISSING}`).expect(404);
  });

  it('is decided by an Org admin of the invited tenant only', async () => {
    const denied = await client(a.admin).post(`/api/v1/approval/${approvalId}/approve`);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/addressed to/);
    await client(a.admin).post(`/api/v1/approval/${approvalId}/reject`, {}).expect(403);
    await client(c.admin).post(`/api/v1/approval/${approvalId}/approve`).expect(404);
    await client(b.editor).post(`/api/v1/approval/${approvalId}/approve`).expect(403);
    await client(b.user).post(`/api/v1/approval/${approvalId}/reject`, {}).expect(403);
    await client(b.admin).post(`/api/v1/approval/${MISSING}/approve`).expect(404);
    // Still pending after all of these.
    expect((await client(b.admin).get(`/api/v1/approval/${approvalId}`)).body.approval.status).toBe('pending');
  });

  it('lets the invited tenant reach the project before it is approved in no way', async () => {
    await client(b.user).get(`/api/v1/projects/${projectId}`).expect(404);
    await client(b.user).get(`/api/v1/projects/${projectId}/datasets`).expect(404);
  });

  it('when approved, associates the tenant at once and cannot be decided again', async () => {
    await client(b.admin).post(`/api/v1/approval/${approvalId}/approve`).expect(200, {});
    const details = await client(a.admin).get(`/api/v1/approval/${approvalId}`).expect(200);
    expect(details.body.approval).toMatchObject({ status: 'approved', reviewed_by: b.admin.id, rejection_reason: null });
    expect(details.body.approval.reviewed_at).toEqual(expect.any(String));
    for (const action of ['approve', 'reject']) {
      const res = await client(b.admin).post(`/api/v1/approval/${approvalId}/${action}`, {});
      expect(res.status).toBe(409);
      expect(res.body.detail).toBe('The request was already approved');
    }
    expect((await client(b.admin).get('/api/v1/approval/pending')).body.project_tenant_approvals).toEqual([]);
  });

  it('refuses a request for the association that exists now', async () => {
    const res = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('The tenant is already associated with this project');
  });

  it("gives the invited tenant's users the project to read, never to change", async () => {
    const datasetId = await createDataset(ctx, a.admin, projectId, 'events');
    const project = await client(b.user).get(`/api/v1/projects/${projectId}`).expect(200);
    expect(project.body).toMatchObject({ id: projectId, tenant_id: a.id, name: 'Shared analytics' });
    const listed = (await client(b.user).get('/api/v1/projects').expect(200)).body.projects as { id: string }[];
    expect(listed.map((p) => p.id)).toContain(projectId);
    const datasets = await client(b.user).get(`/api/v1/projects/${projectId}/datasets`).expect(200);
    expect(datasets.body.datasets).toEqual([expect.objectContaining({ id: datasetId, tenant_id: a.id })]);
    for (const res of [
      await client(b.admin).patch(`/api/v1/projects/${projectId}`, { name: 'Taken over' }),
      await client(b.admin).delete(`/api/v1/projects/${projectId}`),
      await client(b.admin).post('/api/v1/datasets', { name: 'planted', project_id: projectId }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/belongs to another tenant/);
    }
    // The invited tenant's own lists hold none of the project's records.
    const own = (await client(b.user).get('/api/v1/datasets').expect(200)).body.datasets as { tenant_id: string }[];
    expect(own.filter((d) => d.tenant_id !== b.id)).toEqual([]);
    await client(c.user).get(`/api/v1/projects/${projectId}`).expect(404);
    expect((await client(a.admin).get(`/api/v1/projects/${projectId}`)).body.name).toBe('Shared analytics');
  });

  it('lists the invited tenants: all of them to the project tenant, its own to an invited one', async () => {
    await invite(ctx, a.user, projectId, c);
    const all = await client(a.user).get(`/api/v1/projects/${projectId}/tenants`).expect(200);
    expect(all.body.tenants).toEqual([
      { project_id: projectId, tenant_id: b.id, tenant_name: 'Globex', created_at: expect.any(String) },
      { project_id: projectId, tenant_id: c.id, tenant_name: 'Initech', created_at: expect.any(String) },
    ]);
    const own = await client(b.user).get(`/api/v1/projects/${projectId}/tenants`).expect(200);
    expect(own.body.tenants).toEqual([expect.objectContaining({ tenant_id: b.id })]);
    expect((await client(a.user).get(`/api/v1/projects/${projectId}/tenants?skip=1&limit=1`)).body.tenants).toEqual([
      expect.objectContaining({ tenant_id: c.id }),
    ]);
  });
});

describe('a project-dataset request', () => {
  let projectId: string;
  let bDataset: string;

  beforeAll(async () => {
    projectId = await createProject(ctx, a.admin, 'Joint study');
    const bProject = await createProject(ctx, b.admin, 'Globex data');
    bDataset = await createDataset(ctx, b.admin, bProject, 'customers');
  });

  it('needs the project associated with the dataset’s tenant first', async () => {
    const res = await client(a.user).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: bDataset });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/not associated with the dataset's tenant/);
  });

  it('is addressed to the dataset’s tenant, and once approved shares the dataset into the project', async () => {
    await invite(ctx, a.editor, projectId, b);
    const res = await client(a.user).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: bDataset });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'pending',
      project_id: projectId,
      project_name: 'Joint study',
      dataset_id: bDataset,
      dataset_name: 'customers',
      requester_email: a.user.email,
    });
    const approvalId = res.body.id as string;
    const pending = await client(b.admin).get('/api/v1/approval/pending').expect(200);
    expect(pending.body.project_dataset_approvals).toEqual([expect.objectContaining({ id: approvalId })]);
    const details = await client(a.admin).get(`/api/v1/approval/${approvalId}`).expect(200);
    expect(details.body.project_tenant_details).toBeNull();
    expect(details.body.project_dataset_details).toEqual({
      project_id: projectId,
      project_name: 'Joint study',
      requester_name: 'user',
      requester_email: a.user.email,
      dataset_id: bDataset,
      dataset_name: 'customers',
    });
    await client(a.admin).post(`/api/v1/approval/${approvalId}/approve`).expect(403);
    await approveAs(ctx, b.admin, approvalId);

    const listed = await client(a.user).get(`/api/v1/projects/${projectId}/datasets`).expect(200);
    expect(listed.body.datasets).toEqual([expect.objectContaining({ id: bDataset, tenant_id: b.id, name: 'customers' })]);
    expect(await readableDatasets(ctx.db, projectId)).toEqual([
      expect.objectContaining({ tenantId: b.id, shared: true, dataset: expect.objectContaining({ id: bDataset }) }),
    ]);
    // The owner keeps sole control of its dataset.
    await client(a.admin).patch(`/api/v1/datasets/${bDataset}`, { name: 'renamed' }).expect(404);
    await client(a.admin).delete(`/api/v1/datasets/${bDataset}`).expect(404);

    const again = await client(a.user).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: bDataset });
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe('The dataset is already shared with this project');
  });

  it('may be made by the invited tenant for its own dataset', async () => {
    const another = await createDataset(
      ctx,
      b.admin,
      (await client(b.admin).get(`/api/v1/datasets/${bDataset}`)).body.project_id,
      'orders',
    );
    const approvalId = await datasetRequest(ctx, b.user, projectId, another);
    await approveAs(ctx, b.admin, approvalId);
    const listed = (await client(a.user).get(`/api/v1/projects/${projectId}/datasets`)).body.datasets as { id: string }[];
    expect(listed.map((d) => d.id)).toEqual([bDataset, another]);
  });

  it('is refused for a dataset of the project’s own tenant, and for unknown records', async () => {
    const ownDataset = await createDataset(ctx, a.admin, await createProject(ctx, a.admin, 'Elsewhere'), 'mine');
    const own = await client(a.user).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: ownDataset });
    expect(own.status).toBe(409);
    expect(own.body.detail).toMatch(/project's own tenant/);
    const unknownDataset = await client(a.user).post('/api/v1/approval/project-dataset', {
      project_id: projectId,
      dataset_id: MISSING,
    });
    expect(unknownDataset.status).toBe(404);
    // A project the caller's tenant does not reach is unknown to it.
    const cProject = await createProject(ctx, c.admin, 'Initech only');
    await client(a.user).post('/api/v1/approval/project-dataset', { project_id: cProject, dataset_id: bDataset }).expect(404);
  });
});

describe('refusals of project-tenant requests', () => {
  it('answers 404 for a project of another tenant or an unknown tenant, 409 for the own tenant', async () => {
    const projectId = await createProject(ctx, a.admin, 'Refusals');
    const bProject = await createProject(ctx, b.admin, 'Not yours');
    await client(a.user).post('/api/v1/approval/project-tenant', { project_id: bProject, tenant_id: c.id }).expect(404);
    await client(a.user).post('/api/v1/approval/project-tenant', { project_id: MISSING, tenant_id: b.id }).expect(404);
    const unknown = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: MISSING });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Tenant not found');
    const own = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: a.id });
    expect(own.status).toBe(409);
    expect(own.body.detail).toMatch(/needs no invitation/);
  });

  it('answers 403 to an invited tenant inviting others into a project it does not own', async () => {
    const projectId = await createProject(ctx, a.admin, 'Invited only');
    await invite(ctx, a.admin, projectId, b);
    const res = await client(b.admin).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: c.id });
    expect(res.status).toBe(403);
  });
});

describe('rejecting', () => {
  it('records the reviewer and the reason, and frees the association for a new request', async () => {
    const projectId = await createProject(ctx, a.admin, 'To reject');
    const approvalId = await inviteRequest(ctx, a.user, projectId, c.id);
    await client(c.admin).post(`/api/v1/approval/${approvalId}/reject`, { rejection_reason: 'Not this quarter' }).expect(200, {});
    const details = await client(a.admin).get(`/api/v1/approval/${approvalId}`).expect(200);
    expect(details.body.approval).toMatchObject({
      status: 'rejected',
      reviewed_by: c.admin.id,
      rejection_reason: 'Not this quarter',
    });
    for (const action of ['approve', 'reject']) {
      const res = await client(c.admin).post(`/api/v1/approval/${approvalId}/${action}`, {});
      expect(res.status).toBe(409);
      expect(res.body.detail).toBe('The request was already rejected');
    }
    await client(c.user).get(`/api/v1/projects/${projectId}`).expect(404);
    // Without a body, or with a null or empty reason.
    const second = await inviteRequest(ctx, a.user, projectId, c.id);
    await request(ctx.app).post(`/api/v1/approval/${second}/reject`).set('Authorization', `Bearer ${c.admin.token}`).expect(200);
    expect((await client(a.admin).get(`/api/v1/approval/${second}`)).body.approval.rejection_reason).toBeNull();
    const third = await inviteRequest(ctx, a.user, projectId, c.id);
    await client(c.admin).post(`/api/v1/approval/${third}/reject`, { rejection_reason: '  ' }).expect(200);
    expect((await client(a.admin).get(`/api/v1/approval/${third}`)).body.approval.rejection_reason).toBeNull();
  });
});

describe('removing associations', () => {
  let projectId: string;
  let bDataset: string;

  beforeEach(async () => {
    projectId = await createProject(ctx, a.admin, 'Removable');
    bDataset = await createDataset(ctx, b.admin, await createProject(ctx, b.admin, 'B source'), 'source');
    await invite(ctx, a.admin, projectId, b);
    await approveAs(ctx, b.admin, await datasetRequest(ctx, a.user, projectId, bDataset));
  });

  it('takes a shared dataset out at once (Org admin of either side)', async () => {
    await client(a.editor).delete(`/api/v1/projects/${projectId}/shared-datasets/${bDataset}`).expect(403);
    await client(c.admin).delete(`/api/v1/projects/${projectId}/shared-datasets/${bDataset}`).expect(404);
    await client(b.admin).delete(`/api/v1/projects/${projectId}/shared-datasets/${bDataset}`).expect(204);
    expect((await client(a.user).get(`/api/v1/projects/${projectId}/datasets`)).body.datasets).toEqual([]);
    expect(await readableDatasets(ctx.db, projectId)).toEqual([]);
    await client(a.admin).delete(`/api/v1/projects/${projectId}/shared-datasets/${bDataset}`).expect(404);
    // The invitation stands; the dataset may be asked for again.
    await client(b.user).get(`/api/v1/projects/${projectId}`).expect(200);
    await datasetRequest(ctx, a.user, projectId, bDataset);
  });

  it('ends an invitation at once, with the datasets the tenant shared (Org admin of either side)', async () => {
    await client(b.user).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(403);
    await client(c.admin).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(404);
    await client(b.admin).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(204);
    await client(b.user).get(`/api/v1/projects/${projectId}`).expect(404);
    await client(b.user).get(`/api/v1/projects/${projectId}/datasets`).expect(404);
    expect(((await client(b.user).get('/api/v1/projects')).body.projects as { id: string }[]).map((p) => p.id)).not.toContain(
      projectId,
    );
    expect((await client(a.user).get(`/api/v1/projects/${projectId}/datasets`)).body.datasets).toEqual([]);
    expect(await ctx.db.projectDataset.count({ where: { projectId } })).toBe(0);
    await client(a.admin).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(404);
    // A new invitation may be asked for.
    await inviteRequest(ctx, a.user, projectId, b.id);
  });

  it('lets the project tenant’s Org admin end it too', async () => {
    await client(a.admin).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(204);
    await client(b.user).get(`/api/v1/projects/${projectId}`).expect(404);
  });
});

describe('approving what changed meanwhile', () => {
  it('refuses a dataset request once the invitation it needs is gone', async () => {
    const projectId = await createProject(ctx, a.admin, 'Gone invitation');
    const bDataset = await createDataset(ctx, b.admin, await createProject(ctx, b.admin, 'B gone'), 'x');
    await invite(ctx, a.admin, projectId, b);
    const approvalId = await datasetRequest(ctx, a.user, projectId, bDataset);
    await client(a.admin).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`).expect(204);
    const res = await client(b.admin).post(`/api/v1/approval/${approvalId}/approve`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/no longer associated/);
  });

  it('refuses an invitation to a project deleted meanwhile', async () => {
    const projectId = await createProject(ctx, a.admin, 'Deleted');
    const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
    await client(a.admin).delete(`/api/v1/projects/${projectId}`).expect(204);
    const res = await client(b.admin).post(`/api/v1/approval/${approvalId}/approve`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/project was deleted/);
  });
});

describe('expiry', () => {
  const expire = (query: string) => request(ctx.app).post(`/api/v1/approval/expire${query}`);

  it('expires pending requests older than 15 days, by the injected clock, once', async () => {
    const projectId = await createProject(ctx, a.admin, 'Expiring');
    const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
    const created = new Date((await client(a.admin).get(`/api/v1/approval/${approvalId}`)).body.approval.created_at);

    // One millisecond before: still pending, and the run leaves it.
    ctx.deps.now = () => new Date(created.getTime() + 15 * DAY_MS - 1);
    await expire(`?internal_token=${INTERNAL_TOKEN}`).expect(200, {});
    expect((await client(b.admin).get(`/api/v1/approval/${approvalId}`)).body.approval.status).toBe('pending');

    // Its time is up: no longer listed, and neither approved nor rejected, even before a run marks it.
    ctx.deps.now = () => new Date(created.getTime() + 15 * DAY_MS);
    expect((await client(b.admin).get('/api/v1/approval/pending')).body.project_tenant_approvals).toEqual([]);
    for (const action of ['approve', 'reject']) {
      const res = await client(b.admin).post(`/api/v1/approval/${approvalId}/${action}`, {});
      expect(res.status).toBe(409);
      expect(res.body.detail).toBe('The request has expired; create a new request');
    }

    await expire(`?internal_token=${INTERNAL_TOKEN}`).expect(200, {});
    const after = (await client(a.admin).get(`/api/v1/approval/${approvalId}`)).body.approval;
    expect(after).toMatchObject({ status: 'expired', reviewed_by: null, reviewed_at: null });
    // Twice changes nothing more.
    await expire(`?internal_token=${INTERNAL_TOKEN}`).expect(200, {});
    expect((await client(a.admin).get(`/api/v1/approval/${approvalId}`)).body.approval).toEqual(after);
    await client(b.admin).post(`/api/v1/approval/${approvalId}/approve`).expect(409);
    // A new request may be made.
    await inviteRequest(ctx, a.user, projectId, b.id);
  });

  it('takes a new request for the association of one whose time is up before any run marks it, expiring the old one', async () => {
    const projectId = await createProject(ctx, a.admin, 'Time is up');
    const first = await inviteRequest(ctx, a.user, projectId, b.id);
    await invite(ctx, a.admin, projectId, c);
    const datasetId = await createDataset(ctx, c.admin, await createProject(ctx, c.admin, 'C, time is up'), 'c_due');
    const firstDataset = await datasetRequest(ctx, a.user, projectId, datasetId);
    const { expiresAt } = await ctx.db.approvalRequest.findUniqueOrThrow({ where: { id: firstDataset } });
    ctx.deps.now = () => new Date(expiresAt.getTime() + 1000);
    const again = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
    expect(again.status).toBe(201);
    const againDataset = await client(a.user).post('/api/v1/approval/project-dataset', {
      project_id: projectId,
      dataset_id: datasetId,
    });
    expect(againDataset.status).toBe(201);
    const [old, oldDataset] = await Promise.all(
      [first, firstDataset].map((id) => ctx.db.approvalRequest.findUniqueOrThrow({ where: { id } })),
    );
    expect([old!.status, old!.pendingKey, oldDataset!.status, oldDataset!.pendingKey]).toEqual([
      'expired',
      null,
      'expired',
      null,
    ]);
    // The new ones hold the association: a third is refused.
    const third = await client(a.user).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
    expect(third.status).toBe(409);
  });

  it('needs the internal token: missing or wrong is 401, and a user token is no substitute', async () => {
    await expire('').expect(401);
    await expire('?internal_token=wrong').expect(401);
    await expire(`?internal_token=${INTERNAL_TOKEN}x`).expect(401);
    await request(ctx.app).post('/api/v1/approval/expire').set('Authorization', `Bearer ${a.admin.token}`).expect(401);
    const unknown = await expire(`?internal_token=${INTERNAL_TOKEN}&force=1`);
    expect(unknown.status).toBe(422);
  });
});

describe("the worker's expiry", () => {
  const status = async (id: string) => (await ctx.db.approvalRequest.findUniqueOrThrow({ where: { id } })).status;
  const expiresAt = async (id: string) => (await ctx.db.approvalRequest.findUniqueOrThrow({ where: { id } })).expiresAt;

  it('runs hourly, at once and then again after each interval, by the injected clock', async () => {
    expect(EXPIRY_INTERVAL_SECONDS).toBe(3_600);
    const projectId = await createProject(ctx, a.admin, 'Expired by the worker');
    const first = await inviteRequest(ctx, a.user, projectId, b.id);
    const second = await inviteRequest(ctx, a.user, await createProject(ctx, a.admin, 'Expired later'), b.id);
    const firstExpiry = await expiresAt(first);
    ctx.deps.now = () => firstExpiry;
    const expiry = startApprovalExpiry(ctx.deps, { intervalSeconds: 0.05 });
    try {
      await eventually(async () => (await status(first)) === 'expired');
      expect(await status(second)).toBe('pending');
      // Only a later round sees this clock.
      const secondExpiry = await expiresAt(second);
      ctx.deps.now = () => secondExpiry;
      await eventually(async () => (await status(second)) === 'expired');
    } finally {
      await expiry.stop();
    }
  });

  it('stops only once the round under way has finished, and runs no round alongside it', async () => {
    const approvalId = await inviteRequest(ctx, a.user, await createProject(ctx, a.admin, 'Locked'), b.id);
    const until = await expiresAt(approvalId);
    ctx.deps.now = () => until;
    // The request's row is held by another transaction, so the round's UPDATE waits for it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const locked = Promise.withResolvers<void>();
    const holder = ctx.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM approval_requests WHERE id = ${approvalId}::uuid FOR UPDATE`;
        locked.resolve();
        await released;
      },
      { timeout: 60_000 },
    );
    await locked.promise;
    const waitingUpdates = async () =>
      (
        await ctx.db.$queryRaw<{ count: number }[]>`
          SELECT count(*)::int AS count FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'UPDATE%approval_requests%'`
      )[0]!.count;
    const expiry = startApprovalExpiry(ctx.deps, { intervalSeconds: 0.01 });
    await eventually(async () => (await waitingUpdates()) > 0);
    let stopped = false;
    const stopping = expiry.stop().then(() => (stopped = true));
    // The round cannot end while the row is held: no second round waits beside it, and stop has
    // not returned after these round trips to the database.
    expect(await waitingUpdates()).toBe(1);
    expect(await status(approvalId)).toBe('pending');
    expect(stopped).toBe(false);
    release();
    await holder;
    await stopping;
    expect(await status(approvalId)).toBe('expired');
  });
});

describe('invalid input', () => {
  it('answers 422 naming each field, per the validation style', async () => {
    const projectId = await createProject(ctx, a.admin, 'Validation');
    const cases: [object, string[]][] = [
      [{ project_id: 123, tenant_id: b.id }, ['body', 'project_id']],
      [{ project_id: projectId }, ['body', 'tenant_id']],
      [{ project_id: 'not-a-uuid', tenant_id: b.id }, ['body', 'project_id']],
      [{ project_id: projectId, tenant_id: b.id, extra: true }, ['body', 'extra']],
      [{ project_id: `${projectId}\u0000`, tenant_id: b.id }, ['body', 'project_id']],
    ];
    for (const [body, loc] of cases) {
      const res = await client(a.user).post('/api/v1/approval/project-tenant', body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
    }
    const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
    for (const body of [
      { rejection_reason: 'nul \u0000 byte' },
      { rejection_reason: 42 },
      { rejection_reason: 'x'.repeat(2001) },
      { reason: 'unknown field' },
    ]) {
      const res = await client(b.admin).post(`/api/v1/approval/${approvalId}/reject`, body);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc[0]).toBe('body');
    }
    await client(b.admin).post('/api/v1/approval/not-a-uuid/approve').expect(422);
    await client(b.admin).get('/api/v1/approval/not-a-uuid').expect(422);
    await client(b.admin).get('/api/v1/approval/pending?limit=0').expect(422);
    // Roles are checked before input is read.
    await client(b.user).post('/api/v1/approval/not-a-uuid/approve').expect(403);
    expect((await client(b.admin).get(`/api/v1/approval/${approvalId}`)).body.approval.status).toBe('pending');
    const dataset = await client(a.user).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: [] });
    expect(dataset.status).toBe(422);
  });
});

describe('notifications by the default notifier', () => {
  it('writes one .eml per message under the data folder', async () => {
    const projectId = await createProject(ctx, a.admin, 'Mailed <project>');
    const approvalId = await inviteRequest(ctx, a.user, projectId, c.id);
    const dir = path.join(ctx.dataDir, 'notifications');
    const file = `approval-${approvalId}-created-${c.admin.id}@collab-api.eml`;
    await eventually(async () => (await readdir(dir).catch(() => [] as string[])).includes(file));
    const mail = await PostalMime.parse(await readFile(path.join(dir, file)));
    expect(mail.to).toEqual([expect.objectContaining({ address: c.admin.email })]);
    expect(mail.subject).toBe('Invitation to a project: Mailed <project>');
    expect(mail.text).toContain(`https://ui.example.com/approvals/${approvalId}`);
    expect(mail.html).toContain('Mailed &#60;project&#62;');
  });
});
