/**
 * Tenant isolation, route by route: tenant A's users of every role call every /api/v1 operation
 * with tenant B's ids and get 404 (403 where the operation is a matter of role, whatever the
 * id), no list ever shows B's records, and B's records are unchanged afterwards. The route table
 * must cover every operation of the OpenAPI document, so a new route cannot be forgotten here.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { as, createTestContext, type TestContext } from './context.js';
import { type Member, seedTenant, type TenantFixture } from './fixtures.js';
import { openWarehouseCatalog } from './warehouse-catalog.js';

let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;
/** Records of tenant B, and of tenant A for the calls that combine A's record with B's. */
let foreign: Records;
let own: Records;

interface Records {
  projectId: string;
  datasetId: string;
  tableId: string;
  importJobId: string;
  exportJobId: string;
  agentId: string;
  queryId: string;
  queryJobId: string;
  queryExportId: string;
}

async function createRecords(member: Member): Promise<Records> {
  const client = as(ctx.app, member.token);
  const post = async (path: string, body: object) => (await client.post(path, body).expect(201)).body.id as string;
  const projectId = await post('/api/v1/projects', { name: 'Shared name' });
  const datasetId = await post('/api/v1/datasets', { name: 'Shared name', project_id: projectId });
  const tableId = await post('/api/v1/tables', {
    name: 'Shared name',
    schema: [{ name: 'id', type: 'INT64' }],
    dataset_id: datasetId,
  });
  return {
    projectId,
    datasetId,
    tableId,
    importJobId: await post('/api/v1/import-jobs', { status: 'queued', table_id: tableId }),
    exportJobId: await post('/api/v1/export-jobs', { status: 'queued', table_id: tableId }),
    agentId: await post('/api/v1/agents', agentBody(projectId)),
    ...(await queryRecords(member, projectId)),
  };
}

/** A saved query, a DONE job of it and an export (written directly: this test runs no worker). */
async function queryRecords(member: Member, projectId: string) {
  const queryId = (
    await as(ctx.app, member.token).post('/api/v1/queries', { query_text: 'SELECT 1 AS one', project_id: projectId }).expect(201)
  ).body.id as string;
  const { tenantId } = await ctx.db.query.findUniqueOrThrow({ where: { id: queryId } });
  const job = await ctx.db.queryJob.create({
    data: {
      tenantId,
      tenantName: 'Acme',
      queryId,
      status: 'DONE',
      queryText: 'SELECT 1 AS one',
      totalRows: 0n,
      resultColumns: [],
    },
  });
  const queryExport = await ctx.db.queryExport.create({
    data: {
      tenantId,
      queryJobId: job.id,
      status: 'DONE',
      format: 'CSV',
      compression: 'NONE',
      storageKey: `query-exports/${tenantId}/x.csv`,
    },
  });
  return { queryId, queryJobId: job.id, queryExportId: queryExport.id };
}

function agentBody(projectId: string) {
  return { name: 'Shared name', protocol: 'A2A', endpoint_url: 'https://agents.example.com/a', project_id: projectId };
}

/** A project of B that tenant C was invited to, with a dataset of C shared into it (both approved by C). */
let sharing: { projectId: string; tenantId: string; datasetId: string; approvalId: string };

async function shareBetween(owner: TenantFixture, invited: TenantFixture) {
  const post = async (member: Member, path: string, body: object) =>
    (await as(ctx.app, member.token).post(path, body).expect(201)).body.id as string;
  const projectId = await post(owner.admin, '/api/v1/projects', { name: 'Shared with C' });
  const invitedProject = await post(invited.admin, '/api/v1/projects', { name: 'C data' });
  const datasetId = await post(invited.admin, '/api/v1/datasets', { name: 'C dataset', project_id: invitedProject });
  const invitation = await post(owner.user, '/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: invited.id });
  await as(ctx.app, invited.admin.token).post(`/api/v1/approval/${invitation}/approve`).expect(200);
  const approvalId = await post(owner.user, '/api/v1/approval/project-dataset', { project_id: projectId, dataset_id: datasetId });
  await as(ctx.app, invited.admin.token).post(`/api/v1/approval/${approvalId}/approve`).expect(200);
  return { projectId, tenantId: invited.id, datasetId, approvalId };
}

beforeAll(async () => {
  ctx = await createTestContext();
  a = await seedTenant(ctx, 'Tenant A');
  b = await seedTenant(ctx, 'Tenant B');
  own = await createRecords(a.admin);
  foreign = await createRecords(b.admin);
  sharing = await shareBetween(b, await seedTenant(ctx, 'Tenant C'));
});
afterAll(() => ctx.close());

type Role = 'admin' | 'editor' | 'user';
const ROLES: Role[] = ['admin', 'editor', 'user'];
type Client = ReturnType<typeof as>;

/** What an operation does when A's users call it with B's ids. */
type Case =
  /** Calls that name B's records: the status each role gets. */
  | { kind: 'foreign'; calls: ((client: Client) => Promise<Response>)[]; status: Record<Role, 403 | 404> }
  /** Lists: B's records never appear under `key`. */
  | { kind: 'list'; path: () => string; key: string }
  /** Calls that name no record: they act in A's tenant only (or are refused by role). */
  | { kind: 'own'; call: (client: Client) => Promise<Response>; status: Record<Role, 200 | 201 | 401 | 403> };

const everyone = <S extends number>(status: S) => ({ admin: status, editor: status, user: status });
const adminOnly = { admin: 404, editor: 403, user: 403 } as const;
const foreignCall = (...calls: ((client: Client) => Promise<Response>)[]) => ({
  kind: 'foreign' as const,
  calls,
  status: everyone(404),
});
const table = [{ name: 'id', type: 'INT64' }];

const CASES: Record<string, Case> = {
  'POST /api/v1/tenants': { kind: 'own', call: (c) => c.post('/api/v1/tenants', { name: 'Mine' }), status: everyone(403) },
  'GET /api/v1/tenants': { kind: 'own', call: (c) => c.get('/api/v1/tenants'), status: everyone(403) },
  'GET /api/v1/tenants/{tenant_id}': foreignCall((c) => c.get(`/api/v1/tenants/${b.id}`)),
  'PATCH /api/v1/tenants/{tenant_id}': foreignCall((c) => c.patch(`/api/v1/tenants/${b.id}`, { name: 'Taken over' })),
  'DELETE /api/v1/tenants/{tenant_id}': {
    kind: 'foreign',
    calls: [(c) => c.delete(`/api/v1/tenants/${b.id}`)],
    status: everyone(403),
  },

  'GET /api/v1/users': { kind: 'list', path: () => '/api/v1/users', key: 'users' },
  'POST /api/v1/users': {
    kind: 'own',
    call: (c) => c.post('/api/v1/users', { email: `${randomUUID()}@b.test`, name: 'New' }),
    status: { admin: 201, editor: 403, user: 403 },
  },
  'GET /api/v1/users/me': { kind: 'own', call: (c) => c.get('/api/v1/users/me'), status: { admin: 200, editor: 200, user: 200 } },
  'POST /api/v1/users/invite': {
    kind: 'own',
    call: (c) => c.post('/api/v1/users/invite', { email: `${randomUUID()}@b.test`, name: 'Invited' }),
    status: { admin: 201, editor: 403, user: 403 },
  },
  'GET /api/v1/users/{user_id}': foreignCall((c) => c.get(`/api/v1/users/${b.user.id}`)),
  'PUT /api/v1/users/{user_id}': foreignCall((c) =>
    c.put(`/api/v1/users/${b.user.id}`, { email: b.user.email, name: 'Hijacked' }),
  ),
  'DELETE /api/v1/users/{user_id}': {
    kind: 'foreign',
    calls: [(c) => c.delete(`/api/v1/users/${b.user.id}`)],
    status: adminOnly,
  },
  'PUT /api/v1/users/{user_id}/role': {
    kind: 'foreign',
    calls: [(c) => c.put(`/api/v1/users/${b.admin.id}/role`, { role: 'Dataset user' })],
    status: adminOnly,
  },

  'POST /api/v1/projects': {
    kind: 'own',
    call: (c) => c.post('/api/v1/projects', { name: 'Mine' }),
    status: { admin: 201, editor: 201, user: 201 },
  },
  'GET /api/v1/projects': { kind: 'list', path: () => '/api/v1/projects', key: 'projects' },
  'GET /api/v1/projects/{project_id}': foreignCall((c) => c.get(`/api/v1/projects/${foreign.projectId}`)),
  'PATCH /api/v1/projects/{project_id}': foreignCall((c) => c.patch(`/api/v1/projects/${foreign.projectId}`, { name: 'x' })),
  'DELETE /api/v1/projects/{project_id}': foreignCall((c) => c.delete(`/api/v1/projects/${foreign.projectId}`)),

  'POST /api/v1/datasets': foreignCall((c) => c.post('/api/v1/datasets', { name: 'Planted', project_id: foreign.projectId })),
  'GET /api/v1/datasets': { kind: 'list', path: () => '/api/v1/datasets', key: 'datasets' },
  'GET /api/v1/projects/{project_id}/datasets': foreignCall((c) => c.get(`/api/v1/projects/${foreign.projectId}/datasets`)),
  'GET /api/v1/datasets/{dataset_id}': foreignCall((c) => c.get(`/api/v1/datasets/${foreign.datasetId}`)),
  'PATCH /api/v1/datasets/{dataset_id}': foreignCall(
    (c) => c.patch(`/api/v1/datasets/${foreign.datasetId}`, { name: 'x' }),
    (c) => c.patch(`/api/v1/datasets/${foreign.datasetId}`, { share_policy: { allow_exports: false } }),
    (c) => c.patch(`/api/v1/datasets/${own.datasetId}`, { project_id: foreign.projectId }),
  ),
  'DELETE /api/v1/datasets/{dataset_id}': foreignCall((c) => c.delete(`/api/v1/datasets/${foreign.datasetId}`)),
  // The owner's Org admins alone; the tenant the dataset is shared with no more than any other.
  'GET /api/v1/datasets/{dataset_id}/access-log': {
    kind: 'foreign',
    calls: [
      (c) => c.get(`/api/v1/datasets/${foreign.datasetId}/access-log`),
      (c) => c.get(`/api/v1/datasets/${sharing.datasetId}/access-log`),
    ],
    status: adminOnly,
  },

  'POST /api/v1/tables': foreignCall((c) =>
    c.post('/api/v1/tables', { name: 'Planted', schema: table, dataset_id: foreign.datasetId }),
  ),
  'GET /api/v1/tables': { kind: 'list', path: () => '/api/v1/tables', key: 'tables' },
  'GET /api/v1/datasets/{dataset_id}/tables': foreignCall((c) => c.get(`/api/v1/datasets/${foreign.datasetId}/tables`)),
  'GET /api/v1/tables/{table_id}': foreignCall((c) => c.get(`/api/v1/tables/${foreign.tableId}`)),
  'PATCH /api/v1/tables/{table_id}': foreignCall(
    (c) => c.patch(`/api/v1/tables/${foreign.tableId}`, { schema: [{ name: 'other', type: 'STRING' }] }),
    (c) => c.patch(`/api/v1/tables/${foreign.tableId}`, { name: 'x' }),
    (c) =>
      c.patch(`/api/v1/tables/${foreign.tableId}`, {
        analysis_rule: { type: 'aggregation', privacy_unit: 'id', min_distinct: 2 },
      }),
    (c) => c.patch(`/api/v1/tables/${own.tableId}`, { dataset_id: foreign.datasetId }),
  ),
  'DELETE /api/v1/tables/{table_id}': foreignCall((c) => c.delete(`/api/v1/tables/${foreign.tableId}`)),

  'POST /api/v1/import-jobs': foreignCall((c) => c.post('/api/v1/import-jobs', { status: 'x', table_id: foreign.tableId })),
  'GET /api/v1/import-jobs': { kind: 'list', path: () => '/api/v1/import-jobs', key: 'import_jobs' },
  'GET /api/v1/import-jobs/{job_id}': foreignCall((c) => c.get(`/api/v1/import-jobs/${foreign.importJobId}`)),
  'GET /api/v1/tables/{table_id}/import-jobs': foreignCall((c) => c.get(`/api/v1/tables/${foreign.tableId}/import-jobs`)),
  'POST /api/v1/export-jobs': foreignCall((c) => c.post('/api/v1/export-jobs', { status: 'x', table_id: foreign.tableId })),
  'GET /api/v1/export-jobs': { kind: 'list', path: () => '/api/v1/export-jobs', key: 'export_jobs' },
  'GET /api/v1/export-jobs/{job_id}': foreignCall((c) => c.get(`/api/v1/export-jobs/${foreign.exportJobId}`)),
  'GET /api/v1/tables/{table_id}/export-jobs': foreignCall((c) => c.get(`/api/v1/tables/${foreign.tableId}/export-jobs`)),

  'POST /api/v1/agents': {
    kind: 'foreign',
    calls: [(c) => c.post('/api/v1/agents', agentBody(foreign.projectId))],
    status: adminOnly,
  },
  'GET /api/v1/agents': { kind: 'list', path: () => '/api/v1/agents', key: 'agents' },
  'GET /api/v1/agents/{agent_id}': foreignCall((c) => c.get(`/api/v1/agents/${foreign.agentId}`)),
  'PATCH /api/v1/agents/{agent_id}': {
    kind: 'foreign',
    calls: [(c) => c.patch(`/api/v1/agents/${foreign.agentId}`, { status: 'inactive' })],
    status: adminOnly,
  },
  'DELETE /api/v1/agents/{agent_id}': {
    kind: 'foreign',
    calls: [(c) => c.delete(`/api/v1/agents/${foreign.agentId}`)],
    status: adminOnly,
  },
  'GET /api/v1/agents/{agent_id}/rate-limits': foreignCall((c) => c.get(`/api/v1/agents/${foreign.agentId}/rate-limits`)),
  'PUT /api/v1/agents/{agent_id}/rate-limits': {
    kind: 'foreign',
    calls: [
      (c) =>
        c.put(`/api/v1/agents/${foreign.agentId}/rate-limits`, {
          max_requests_per_second: 0,
          max_requests_per_minute: 0,
          max_requests_per_hour: 0,
        }),
    ],
    status: adminOnly,
  },
  'POST /api/v1/agents/route': foreignCall(
    (c) => c.post('/api/v1/agents/route', { agent_id: foreign.agentId, message: { text: 'hi' } }),
    (c) => c.post('/api/v1/agents/route', { agent_id: own.agentId, message: { text: 'hi' }, project_id: foreign.projectId }),
  ),
  'POST /api/v1/agents/route/project': foreignCall((c) =>
    c.post('/api/v1/agents/route/project', { project_id: foreign.projectId, message: { text: 'hi' } }),
  ),
  'POST /api/v1/agents/{agent_id}/gateway': foreignCall((c) =>
    c.post(`/api/v1/agents/${foreign.agentId}/gateway`, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } }),
  ),
  'POST /api/v1/projects/{project_id}/agents': {
    kind: 'foreign',
    calls: [
      (c) => c.post(`/api/v1/projects/${foreign.projectId}/agents`, { agent_id: own.agentId }),
      (c) => c.post(`/api/v1/projects/${own.projectId}/agents`, { agent_id: foreign.agentId }),
    ],
    status: adminOnly,
  },
  'GET /api/v1/projects/{project_id}/agents': foreignCall((c) => c.get(`/api/v1/projects/${foreign.projectId}/agents`)),
  'DELETE /api/v1/projects/{project_id}/agents/{agent_id}': {
    kind: 'foreign',
    calls: [
      (c) => c.delete(`/api/v1/projects/${foreign.projectId}/agents/${foreign.agentId}`),
      (c) => c.delete(`/api/v1/projects/${own.projectId}/agents/${foreign.agentId}`),
    ],
    status: adminOnly,
  },

  'POST /api/v1/approval/project-tenant': foreignCall((c) =>
    c.post('/api/v1/approval/project-tenant', { project_id: foreign.projectId, tenant_id: a.id }),
  ),
  'POST /api/v1/approval/project-dataset': foreignCall((c) =>
    c.post('/api/v1/approval/project-dataset', { project_id: sharing.projectId, dataset_id: sharing.datasetId }),
  ),
  'GET /api/v1/approval/pending': {
    kind: 'own',
    call: (c) => c.get('/api/v1/approval/pending'),
    status: { admin: 200, editor: 403, user: 403 },
  },
  'GET /api/v1/approval/mine': { kind: 'own', call: (c) => c.get('/api/v1/approval/mine'), status: everyone(200) },
  // Internal: a user's token is no internal token.
  'POST /api/v1/approval/expire': { kind: 'own', call: (c) => c.post('/api/v1/approval/expire'), status: everyone(401) },
  'GET /api/v1/approval/{approval_id}': {
    kind: 'foreign',
    calls: [(c) => c.get(`/api/v1/approval/${sharing.approvalId}`)],
    status: adminOnly,
  },
  'POST /api/v1/approval/{id}/approve': {
    kind: 'foreign',
    calls: [(c) => c.post(`/api/v1/approval/${sharing.approvalId}/approve`)],
    status: adminOnly,
  },
  'POST /api/v1/approval/{id}/reject': {
    kind: 'foreign',
    calls: [(c) => c.post(`/api/v1/approval/${sharing.approvalId}/reject`, { rejection_reason: 'x' })],
    status: adminOnly,
  },
  'POST /api/v1/queries': foreignCall((c) =>
    c.post('/api/v1/queries', { query_text: 'SELECT 1', project_id: foreign.projectId }),
  ),
  'GET /api/v1/queries': { kind: 'list', path: () => '/api/v1/queries', key: 'queries' },
  'GET /api/v1/queries/{query_id}': foreignCall((c) => c.get(`/api/v1/queries/${foreign.queryId}`)),
  'PATCH /api/v1/queries/{query_id}': foreignCall(
    (c) => c.patch(`/api/v1/queries/${foreign.queryId}`, { query_text: 'SELECT 2' }),
    (c) => c.patch(`/api/v1/queries/${own.queryId}`, { project_id: foreign.projectId }),
  ),
  'DELETE /api/v1/queries/{query_id}': foreignCall((c) => c.delete(`/api/v1/queries/${foreign.queryId}`)),
  'POST /api/v1/queries/run': foreignCall((c) =>
    c.post('/api/v1/queries/run', { query_id: foreign.queryId, query_text: 'SELECT 1 AS one' }),
  ),
  'GET /api/v1/query-jobs': { kind: 'list', path: () => '/api/v1/query-jobs', key: 'query_jobs' },
  'GET /api/v1/query-jobs/{job_id}': foreignCall((c) => c.get(`/api/v1/query-jobs/${foreign.queryJobId}`)),
  'GET /api/v1/queries/{query_id}/jobs': foreignCall((c) => c.get(`/api/v1/queries/${foreign.queryId}/jobs`)),
  'GET /api/v1/query-jobs/{job_id}/results': foreignCall((c) => c.get(`/api/v1/query-jobs/${foreign.queryJobId}/results`)),
  'POST /api/v1/query-jobs/{job_id}/cancel': foreignCall((c) => c.post(`/api/v1/query-jobs/${foreign.queryJobId}/cancel`)),
  'POST /api/v1/query-jobs/{job_id}/exports': foreignCall((c) => c.post(`/api/v1/query-jobs/${foreign.queryJobId}/exports`, {})),
  'GET /api/v1/query-jobs/{job_id}/exports': foreignCall((c) => c.get(`/api/v1/query-jobs/${foreign.queryJobId}/exports`)),
  'GET /api/v1/exports/{export_id}': foreignCall((c) => c.get(`/api/v1/exports/${foreign.queryExportId}`)),
  'GET /api/v1/exports/{export_id}/download-url': foreignCall((c) =>
    c.get(`/api/v1/exports/${foreign.queryExportId}/download-url`),
  ),
  // The download link's signature is its credential, whoever calls: a forged one is refused.
  'GET /api/v1/exports/{export_id}/file': {
    kind: 'foreign',
    calls: [(c) => c.get(`/api/v1/exports/${foreign.queryExportId}/file?expires=4102444800&token=forged`)],
    status: everyone(403),
  },
  'GET /api/v1/quota/summary': {
    kind: 'own',
    call: (c) => c.get('/api/v1/quota/summary'),
    status: { admin: 200, editor: 403, user: 403 },
  },
  'GET /api/v1/quota/cost-history': {
    kind: 'own',
    call: (c) => c.get('/api/v1/quota/cost-history'),
    status: { admin: 200, editor: 403, user: 403 },
  },
  'PUT /api/v1/quota': {
    kind: 'own',
    call: (c) => c.put('/api/v1/quota', { tenant_id: b.id, daily_quota_usd: '0', monthly_quota_usd: '0' }),
    status: everyone(403),
  },

  'GET /api/v1/projects/{project_id}/tenants': foreignCall((c) => c.get(`/api/v1/projects/${sharing.projectId}/tenants`)),
  'DELETE /api/v1/projects/{project_id}/tenants/{tenant_id}': {
    kind: 'foreign',
    calls: [(c) => c.delete(`/api/v1/projects/${sharing.projectId}/tenants/${sharing.tenantId}`)],
    status: adminOnly,
  },
  'DELETE /api/v1/projects/{project_id}/shared-datasets/{dataset_id}': {
    kind: 'foreign',
    calls: [(c) => c.delete(`/api/v1/projects/${sharing.projectId}/shared-datasets/${sharing.datasetId}`)],
    status: adminOnly,
  },
};

it('covers every /api/v1 operation of the OpenAPI document', async () => {
  const { paths } = (await as(ctx.app, a.user.token).get('/openapi.json')).body as { paths: Record<string, object> };
  const operations = Object.entries(paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  expect(operations.sort()).toEqual(Object.keys(CASES).sort());
});

const memberOf = (tenant: TenantFixture, role: Role) => tenant[role];

describe.each(ROLES)("tenant A's %s", (role) => {
  const client = () => as(ctx.app, memberOf(a, role).token);

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'foreign'))(
    'gets 403 or 404 from %s with B ids',
    async (_name, c) => {
      if (c.kind !== 'foreign') return;
      for (const call of c.calls) {
        const res = await call(client());
        expect({ status: res.status, body: res.body }).toEqual({ status: c.status[role], body: { detail: expect.any(String) } });
      }
    },
  );

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'list'))('never sees B records in %s', async (_name, c) => {
    if (c.kind !== 'list') return;
    const res = await client().get(`${c.path()}?limit=1000`);
    expect(res.status).toBe(200);
    const items = res.body[c.key] as { id: string; tenant_id: string }[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((item) => item.tenant_id !== a.id)).toEqual([]);
  });

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'own'))(
    'acts in its own tenant only through %s',
    async (_name, c) => {
      if (c.kind !== 'own') return;
      const res = await c.call(client());
      expect(res.status).toBe(c.status[role]);
      if (res.status !== 403 && res.body.tenant_id !== undefined) expect(res.body.tenant_id).toBe(a.id);
    },
  );
});

it("leaves B's records exactly as they were", async () => {
  const client = as(ctx.app, b.admin.token);
  const get = async (path: string) => (await client.get(path).expect(200)).body;
  expect(await get(`/api/v1/tenants/${b.id}`)).toMatchObject({ name: 'Tenant B', archived_at: null });
  expect(await get(`/api/v1/users/${b.user.id}`)).toMatchObject({ name: 'user', role: 'Dataset user' });
  expect(await get(`/api/v1/users/${b.admin.id}`)).toMatchObject({ role: 'Org admin' });
  for (const path of [`projects/${foreign.projectId}`, `datasets/${foreign.datasetId}`, `tables/${foreign.tableId}`]) {
    expect(await get(`/api/v1/${path}`)).toMatchObject({ name: 'Shared name', archived_at: null });
  }
  expect((await get(`/api/v1/tables/${foreign.tableId}`)).schema).toEqual([
    { name: 'id', type: 'INT64', mode: 'NULLABLE', private: false },
  ]);
  expect((await get(`/api/v1/tables/${foreign.tableId}`)).analysis_rule).toBeNull();
  expect((await get(`/api/v1/datasets/${foreign.datasetId}`)).share_policy).toEqual({ allow_exports: true });
  expect((await get(`/api/v1/projects/${foreign.projectId}/datasets`)).datasets).toHaveLength(1);
  expect((await get(`/api/v1/datasets/${foreign.datasetId}/tables`)).tables).toHaveLength(1);
  expect((await get(`/api/v1/tables/${foreign.tableId}/import-jobs`)).import_jobs).toHaveLength(1);
  expect((await get(`/api/v1/tables/${foreign.tableId}/export-jobs`)).export_jobs).toHaveLength(1);
  expect((await get(`/api/v1/datasets/${foreign.datasetId}`)).project_id).toBe(foreign.projectId);
  expect(await get(`/api/v1/agents/${foreign.agentId}`)).toMatchObject({
    name: 'Shared name',
    status: 'active',
    archived_at: null,
  });
  expect(await get(`/api/v1/agents/${foreign.agentId}/rate-limits`)).toMatchObject({ max_requests_per_second: '10' });
  expect((await get(`/api/v1/projects/${foreign.projectId}/agents`)).agents).toEqual([
    expect.objectContaining({ agent_id: foreign.agentId }),
  ]);
  expect(await ctx.db.user.count({ where: { tenantId: b.id } })).toBe(3);
  expect(await get(`/api/v1/queries/${foreign.queryId}`)).toMatchObject({ query_text: 'SELECT 1 AS one', archived_at: null });
  expect((await get(`/api/v1/queries/${foreign.queryId}/jobs`)).query_jobs).toEqual([
    expect.objectContaining({ id: foreign.queryJobId }),
  ]);
  expect((await get(`/api/v1/query-jobs/${foreign.queryJobId}/exports`)).exports).toEqual([
    expect.objectContaining({ id: foreign.queryExportId, signed_url: null }),
  ]);
  expect((await as(ctx.app, b.admin.token).get('/api/v1/quota/summary').expect(200)).body.quota.daily_quota_usd).not.toBe(
    '0.000000',
  );
  expect((await get(`/api/v1/projects/${sharing.projectId}/tenants`)).tenants).toEqual([
    expect.objectContaining({ tenant_id: sharing.tenantId }),
  ]);
  expect((await get(`/api/v1/projects/${sharing.projectId}/datasets`)).datasets).toEqual([
    expect.objectContaining({ id: sharing.datasetId, tenant_id: sharing.tenantId }),
  ]);
  expect((await get(`/api/v1/approval/${sharing.approvalId}`)).approval.status).toBe('approved');
  const catalog = await openWarehouseCatalog(ctx.dataDir);
  try {
    expect(await catalog.tablesOf(foreign.datasetId)).toEqual([`t_${foreign.tableId.replaceAll('-', '_')}`]);
    expect(await catalog.columnsOf(foreign.datasetId, foreign.tableId)).toEqual([{ name: 'id', type: 'BIGINT', nullable: true }]);
  } finally {
    catalog.close();
  }
});
