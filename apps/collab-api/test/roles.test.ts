/**
 * The role matrix: every operation the spec reserves to Org admins, the tenant operations
 * reserved to platform operators, and every operation on agents (which Org admins register,
 * change, throttle, assign and delete, and every user may read and send messages to), called by
 * each of the three roles and by a platform operator who is no tenant's user.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { startA2aAgent, type TestAgent } from './agents/servers.js';
import { as, createTestContext, type TestContext } from './context.js';
import { operatorToken, seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
let echo: TestAgent;
let projectId: string;
beforeAll(async () => {
  [ctx, echo] = await Promise.all([createTestContext({ COLLAB_AGENT_ALLOW_PRIVATE: 'true' }), startA2aAgent()]);
  acme = await seedTenant(ctx, 'Acme');
  projectId = await newProjectId();
});
afterAll(async () => {
  await echo.close();
  await ctx.close();
});

type Caller = 'admin' | 'editor' | 'user' | 'operator';

/** Each call gets fresh targets, so that one caller's success does not change the next one's answer. */
const OPERATIONS: [string, (client: ReturnType<typeof as>) => Promise<Response>, Record<Caller, number>][] = [
  [
    'DELETE /api/v1/users/{user_id}',
    async (c) => c.delete(`/api/v1/users/${await newUserId()}`),
    { admin: 204, editor: 403, user: 403, operator: 401 },
  ],
  [
    'POST /api/v1/users/invite',
    (c) => c.post('/api/v1/users/invite', { email: `${randomUUID()}@acme.test`, name: 'Invitee' }),
    { admin: 201, editor: 403, user: 403, operator: 401 },
  ],
  [
    'PUT /api/v1/users/{user_id}/role',
    async (c) => c.put(`/api/v1/users/${await newUserId()}/role`, { role: 'Dataset editor' }),
    { admin: 200, editor: 403, user: 403, operator: 401 },
  ],
  [
    'POST /api/v1/tenants',
    (c) => c.post('/api/v1/tenants', { name: 'New tenant' }),
    { admin: 403, editor: 403, user: 403, operator: 201 },
  ],
  ['GET /api/v1/tenants', (c) => c.get('/api/v1/tenants'), { admin: 403, editor: 403, user: 403, operator: 200 }],
  [
    'GET /api/v1/tenants/{own tenant}',
    (c) => c.get(`/api/v1/tenants/${acme.id}`),
    { admin: 200, editor: 403, user: 403, operator: 200 },
  ],
  [
    'PATCH /api/v1/tenants/{own tenant}',
    (c) => c.patch(`/api/v1/tenants/${acme.id}`, { name: 'Acme' }),
    { admin: 200, editor: 403, user: 403, operator: 200 },
  ],
  [
    'DELETE /api/v1/tenants/{tenant_id}',
    async (c) => c.delete(`/api/v1/tenants/${(await ctx.db.tenant.create({ data: { name: 'Disposable' } })).id}`),
    { admin: 403, editor: 403, user: 403, operator: 204 },
  ],

  ['POST /api/v1/agents', (c) => c.post('/api/v1/agents', agentBody()), { admin: 201, editor: 403, user: 403, operator: 401 }],
  ['GET /api/v1/agents', (c) => c.get('/api/v1/agents'), { admin: 200, editor: 200, user: 200, operator: 401 }],
  [
    'GET /api/v1/agents/{agent_id}',
    async (c) => c.get(`/api/v1/agents/${await newAgentId()}`),
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'PATCH /api/v1/agents/{agent_id}',
    async (c) => c.patch(`/api/v1/agents/${await newAgentId()}`, { endpoint_url: 'https://elsewhere.example.com/' }),
    { admin: 200, editor: 403, user: 403, operator: 401 },
  ],
  [
    'DELETE /api/v1/agents/{agent_id}',
    async (c) => c.delete(`/api/v1/agents/${await newAgentId()}`),
    { admin: 204, editor: 403, user: 403, operator: 401 },
  ],
  [
    'GET /api/v1/agents/{agent_id}/rate-limits',
    async (c) => c.get(`/api/v1/agents/${await newAgentId()}/rate-limits`),
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'PUT /api/v1/agents/{agent_id}/rate-limits',
    async (c) =>
      c.put(`/api/v1/agents/${await newAgentId()}/rate-limits`, {
        max_requests_per_second: '0',
        max_requests_per_minute: '0',
        max_requests_per_hour: '0',
      }),
    { admin: 200, editor: 403, user: 403, operator: 401 },
  ],
  [
    'POST /api/v1/agents/route',
    async (c) => c.post('/api/v1/agents/route', { agent_id: await newAgentId(), message: { text: 'hi' } }),
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'POST /api/v1/agents/route/project',
    async (c) => {
      const project = await newProjectId();
      await newAgentId(project);
      return c.post('/api/v1/agents/route/project', { project_id: project, message: { text: 'hi' } });
    },
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'POST /api/v1/agents/{agent_id}/gateway',
    async (c) =>
      c.post(`/api/v1/agents/${await newAgentId()}/gateway`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      }),
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'POST /api/v1/projects/{project_id}/agents',
    async (c) => c.post(`/api/v1/projects/${await newProjectId()}/agents`, { agent_id: await newAgentId() }),
    { admin: 201, editor: 403, user: 403, operator: 401 },
  ],
  [
    'GET /api/v1/projects/{project_id}/agents',
    (c) => c.get(`/api/v1/projects/${projectId}/agents`),
    { admin: 200, editor: 200, user: 200, operator: 401 },
  ],
  [
    'DELETE /api/v1/projects/{project_id}/agents/{agent_id}',
    async (c) => {
      // An agent keeps one project: this one has a second to be removed from.
      const [agent, second] = [await newAgentId(), await newProjectId()];
      await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: agent }).expect(201);
      return c.delete(`/api/v1/projects/${second}/agents/${agent}`);
    },
    { admin: 204, editor: 403, user: 403, operator: 401 },
  ],
];

const admin = () => as(ctx.app, acme.admin.token);

function agentBody(project = projectId) {
  return { name: 'Echo', protocol: 'A2A', endpoint_url: echo.url, project_id: project };
}

async function newAgentId(project = projectId): Promise<string> {
  return (await admin().post('/api/v1/agents', agentBody(project)).expect(201)).body.id as string;
}

async function newProjectId(): Promise<string> {
  return (
    await admin()
      .post('/api/v1/projects', { name: `Project ${randomUUID()}` })
      .expect(201)
  ).body.id as string;
}

/** Every operation on agents and their assignments, from the OpenAPI document: each must have its row above. */
it('has a row for every operation on agents', async () => {
  const { paths } = (await admin().get('/openapi.json')).body as { paths: Record<string, object> };
  const agentOperations = Object.entries(paths)
    .filter(([path]) => /^\/api\/v1\/(agents|projects\/\{project_id\}\/agents)/.test(path))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  const rows = OPERATIONS.map(([operation]) => operation);
  expect(agentOperations.filter((operation) => !rows.includes(operation))).toEqual([]);
  expect(agentOperations.length).toBeGreaterThan(10);
});

async function newUserId(): Promise<string> {
  const res = await as(ctx.app, acme.admin.token).post('/api/v1/users', { email: `${randomUUID()}@acme.test`, name: 'Target' });
  return res.body.id;
}

function tokenOf(caller: Caller): string {
  return caller === 'operator' ? operatorToken(ctx) : acme[caller].token;
}

describe.each(OPERATIONS)('%s', (_operation, call, expected) => {
  it.each(Object.entries(expected))('answers %s with %i', async (caller, status) => {
    const res = await call(as(ctx.app, tokenOf(caller as Caller)));
    expect(res.status).toBe(status);
    if (status >= 400) expect(res.body).toEqual({ detail: expect.any(String) });
  });
});

it('checks the role before the input: an invalid body from a Dataset user is 403, not 422', async () => {
  const res = await as(ctx.app, acme.user.token).post('/api/v1/users/invite', { email: 'nonsense' });
  expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { detail: 'Only an Org admin may do this' } });
});

it('lets a platform operator who is also a user act as both', async () => {
  const token = ctx.token(acme.editor.sub, { platformAdmin: true });
  expect((await as(ctx.app, token).get('/api/v1/tenants')).status).toBe(200);
  expect((await as(ctx.app, token).get('/api/v1/users/me')).body.id).toBe(acme.editor.id);
  expect((await as(ctx.app, token).post('/api/v1/users/invite', { email: `${randomUUID()}@acme.test`, name: 'x' })).status).toBe(
    403,
  );
});
