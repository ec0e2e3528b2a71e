/**
 * Requests and decisions racing each other: whatever arrives at once, the database leaves exactly
 * one pending request per association and at most one association, and every loser gets a 409.
 */
import { Role } from '../../src/access/index.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { type Member, seedTenant, type TenantFixture } from '../fixtures.js';
import { createDataset, createProject, datasetRequest, invite, inviteRequest } from './helpers.js';

let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;
/** More Org admins of B, so that decisions come from several people at once. */
let bAdmins: Member[];

const PARALLEL = 8;

beforeAll(async () => {
  // A connection for each request at once: the losers of a race wait on the winner's row lock holding theirs,
  // and on a loaded machine the ones queued behind them for a connection pass Prisma's maxWait (2 s) and
  // answer 503, as they should; what this file checks is the database's race, not the pool's size.
  ctx = await createTestContext({ DB_POOL_SIZE: String(PARALLEL + 2) });
  a = await seedTenant(ctx, 'Acme');
  b = await seedTenant(ctx, 'Globex');
  bAdmins = [b.admin];
  for (let i = 0; i < 3; i++) {
    const sub = `idp|admin-${i}-${b.id}`;
    const email = `admin${i}@${b.id}.test`;
    const user = await ctx.db.user.create({
      data: { tenantId: b.id, email, liveEmail: email, name: `Admin ${i}`, role: Role.OrgAdmin, identityProviderId: sub },
    });
    bAdmins.push({ id: user.id, sub, email, role: Role.OrgAdmin, token: ctx.token(sub) });
  }
  // Otherwise the first request's mail to the admins starts pg-boss inside its transaction (installing its schema in
  // this fresh database, seconds on a loaded machine), while the pool's other connections wait on that request's
  // lock and the rest of the requests wait for a connection until they time out (503).
  await ctx.deps.queue.start();
});
afterAll(() => ctx.close());

const statuses = (responses: { status: number }[]) => responses.map((res) => res.status).sort();

it('makes one pending request of many identical ones sent at once', async () => {
  const projectId = await createProject(ctx, a.admin, 'Racing requests');
  const members = [a.admin, a.editor, a.user];
  const responses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      as(ctx.app, members[i % members.length]!.token).post('/api/v1/approval/project-tenant', {
        project_id: projectId,
        tenant_id: b.id,
      }),
    ),
  );
  expect(statuses(responses)).toEqual([201, ...Array<number>(PARALLEL - 1).fill(409)]);
  for (const res of responses.filter((r) => r.status === 409)) {
    expect(res.body.detail).toBe('A pending request for this association already exists');
  }
  expect(await ctx.db.approvalRequest.count({ where: { projectId, status: 'pending' } })).toBe(1);
});

it('makes one association of many approvals of the same request at once', async () => {
  const projectId = await createProject(ctx, a.admin, 'Racing approvals');
  const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
  const responses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      as(ctx.app, bAdmins[i % bAdmins.length]!.token).post(`/api/v1/approval/${approvalId}/approve`),
    ),
  );
  expect(statuses(responses)).toEqual([200, ...Array<number>(PARALLEL - 1).fill(409)]);
  expect(await ctx.db.projectTenant.count({ where: { projectId } })).toBe(1);
  expect((await ctx.db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe('approved');
});

it('lets exactly one of an approval and a rejection at once win, and leaves the records agreeing with it', async () => {
  for (let round = 0; round < 4; round++) {
    const projectId = await createProject(ctx, a.admin, `Approve or reject ${round}`);
    const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
    const [approved, rejected] = await Promise.all([
      as(ctx.app, bAdmins[0]!.token).post(`/api/v1/approval/${approvalId}/approve`),
      as(ctx.app, bAdmins[1]!.token).post(`/api/v1/approval/${approvalId}/reject`, { rejection_reason: 'No' }),
    ]);
    expect([approved.status, rejected.status].sort()).toEqual([200, 409]);
    const request = await ctx.db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    const associations = await ctx.db.projectTenant.count({ where: { projectId } });
    expect({ status: request.status, associations }).toEqual(
      approved.status === 200 ? { status: 'approved', associations: 1 } : { status: 'rejected', associations: 0 },
    );
  }
});

it('makes one pending dataset request, and one shared dataset, whatever races', async () => {
  const projectId = await createProject(ctx, a.admin, 'Racing datasets');
  const datasetId = await createDataset(ctx, b.admin, await createProject(ctx, b.admin, 'Source'), 'facts');
  await invite(ctx, a.admin, projectId, b);
  const requests = await Promise.all(
    Array.from({ length: PARALLEL }, () =>
      as(ctx.app, a.user.token).post('/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: datasetId }),
    ),
  );
  expect(statuses(requests)).toEqual([201, ...Array<number>(PARALLEL - 1).fill(409)]);
  const approvalId = requests.find((res) => res.status === 201)!.body.id as string;
  const approvals = await Promise.all(
    bAdmins.map((admin) => as(ctx.app, admin.token).post(`/api/v1/approval/${approvalId}/approve`)),
  );
  expect(statuses(approvals)).toEqual([200, ...Array<number>(bAdmins.length - 1).fill(409)]);
  expect(await ctx.db.projectDataset.count({ where: { projectId } })).toBe(1);
});

it('never leaves a shared dataset without the invitation it relies on, when both race', async () => {
  for (let round = 0; round < 4; round++) {
    const projectId = await createProject(ctx, a.admin, `Approve or remove ${round}`);
    const datasetId = await createDataset(ctx, b.admin, await createProject(ctx, b.admin, `Source ${round}`), 'facts');
    await invite(ctx, a.admin, projectId, b);
    const approvalId = await datasetRequest(ctx, a.user, projectId, datasetId);
    const [approved, removed] = await Promise.all([
      as(ctx.app, b.admin.token).post(`/api/v1/approval/${approvalId}/approve`),
      as(ctx.app, a.admin.token).delete(`/api/v1/projects/${projectId}/tenants/${b.id}`),
    ]);
    expect(removed.status).toBe(204);
    expect([200, 409]).toContain(approved.status);
    expect(await ctx.db.projectTenant.count({ where: { projectId } })).toBe(0);
    expect(await ctx.db.projectDataset.count({ where: { projectId } })).toBe(0);
  }
});
