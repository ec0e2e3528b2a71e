import type request from 'supertest';
import { parseRateLimit } from '../../src/agents/rate-limits.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
let globex: TenantFixture;
let projectId: string;

const MISSING = '0195a6c1-0000-7000-8000-000000000000';
const admin = () => as(ctx.app, acme.admin.token);
const editor = () => as(ctx.app, acme.editor.token);
const user = () => as(ctx.app, acme.user.token);

function agentBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Support bot',
    protocol: 'A2A',
    endpoint_url: 'https://agents.example.com/support',
    project_id: projectId,
    ...overrides,
  };
}

async function createAgent(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await admin().post('/api/v1/agents', agentBody(overrides));
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function newProject(name: string): Promise<string> {
  return (await admin().post('/api/v1/projects', { name }).expect(201)).body.id as string;
}

beforeAll(async () => {
  ctx = await createTestContext({
    PUBLIC_BASE_URL: 'https://collab.example.com',
    COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_MINUTE: '120',
  });
  acme = await seedTenant(ctx, 'Acme');
  globex = await seedTenant(ctx, 'Globex');
  projectId = await newProject('Support');
});
afterAll(() => ctx.close());

describe('POST /api/v1/agents', () => {
  it('registers an agent, with its gateway URL, assigned to the project in the same transaction', async () => {
    const res = await admin().post(
      '/api/v1/agents',
      agentBody({
        description: 'Answers tickets',
        capabilities: { streaming: false },
        agent_metadata: { team: 'care' },
        role: 'triage',
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: acme.id,
      name: 'Support bot',
      description: 'Answers tickets',
      protocol: 'A2A',
      endpoint_url: 'https://agents.example.com/support',
      capabilities: { streaming: false },
      agent_metadata: { team: 'care' },
      status: 'active',
      created_at: expect.any(String),
      archived_at: null,
      gateway_url: `https://collab.example.com/api/v1/agents/${res.body.id}/gateway`,
    });
    const assignments = (await user().get(`/api/v1/projects/${projectId}/agents`)).body.agents;
    expect(assignments).toContainEqual({
      project_id: projectId,
      agent_id: res.body.id,
      role: 'triage',
      created_at: expect.any(String),
      archived_at: null,
    });
  });

  it('is for Org admins only: 403 before the input is read', async () => {
    for (const client of [editor(), user()]) {
      const res = await client.post('/api/v1/agents', { nonsense: true });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: 'Only an Org admin may do this' });
    }
  });

  it('needs a live project of the tenant (404), and creates nothing without one', async () => {
    const otherProject = (await as(ctx.app, globex.admin.token).post('/api/v1/projects', { name: 'Theirs' })).body.id;
    const before = (await admin().get('/api/v1/agents')).body.agents.length;
    for (const project of [otherProject, MISSING]) {
      expect((await admin().post('/api/v1/agents', agentBody({ project_id: project }))).status).toBe(404);
    }
    expect((await admin().get('/api/v1/agents')).body.agents).toHaveLength(before);
  });

  it('answers 422 for invalid input, naming each field', async () => {
    const res = await admin().post('/api/v1/agents', {
      name: '',
      protocol: 'SOAP',
      endpoint_url: 'ftp://agents.example.com',
      capabilities: ['x'],
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual([
      'body.name',
      'body.protocol',
      'body.endpoint_url',
      'body.capabilities',
      'body.project_id',
    ]);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'a metadata address'],
    ['http://[fd00:ec2::254]/', 'a metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'a metadata service'],
    ['http://169.254.1.1:8080/', 'a link-local address'],
    ['http://10.0.0.5/', 'a private address'],
    ['http://127.0.0.1:9000/', 'a loopback address'],
    ['http://localhost:9000/', 'a loopback address'],
    ['http://0x7f000001/', 'a loopback address'],
  ])('refuses an endpoint at %s (422)', async (endpointUrl, refusal) => {
    const res = await admin().post('/api/v1/agents', agentBody({ endpoint_url: endpointUrl }));
    expect(res.status).toBe(422);
    // Private and loopback addresses say how a local deployment allows them; the others are never allowed.
    const remedy = /private|loopback/.test(refusal)
      ? ' (a local deployment allows private and loopback addresses with COLLAB_AGENT_ALLOW_PRIVATE=true)'
      : '';
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'endpoint_url'],
        msg: `The host is ${refusal}, which agents may not be called at${remedy}`,
        type: 'value_error',
      },
    ]);
  });

  it('refuses credentials in endpoint_url', async () => {
    const res = await admin().post('/api/v1/agents', agentBody({ endpoint_url: 'https://bot:secret@agents.example.com/' }));
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'endpoint_url'], type: 'url_parsing' });
  });
});

describe('GET /api/v1/agents and /api/v1/agents/{agent_id}', () => {
  it("lists the tenant's live agents oldest first, with skip and limit", async () => {
    const tenant = await seedTenant(ctx, 'Lists');
    const client = as(ctx.app, tenant.admin.token);
    const project = (await client.post('/api/v1/projects', { name: 'P' })).body.id;
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      ids.push((await client.post('/api/v1/agents', agentBody({ name, project_id: project })).expect(201)).body.id);
    }
    await client.delete(`/api/v1/agents/${ids[1]}`).expect(204);
    const names = (res: request.Response) => res.body.agents.map((agent: { name: string }) => agent.name);
    expect(names(await as(ctx.app, tenant.user.token).get('/api/v1/agents'))).toEqual(['one', 'three']);
    expect(names(await client.get('/api/v1/agents?skip=1&limit=1'))).toEqual(['three']);
  });

  it("answers 404 for another tenant's agent, a deleted one and one that never was", async () => {
    const id = await createAgent();
    expect((await user().get(`/api/v1/agents/${id}`)).body.id).toBe(id);
    expect((await as(ctx.app, globex.admin.token).get(`/api/v1/agents/${id}`)).status).toBe(404);
    expect((await user().get(`/api/v1/agents/${MISSING}`)).status).toBe(404);
    await admin().delete(`/api/v1/agents/${id}`).expect(204);
    expect((await user().get(`/api/v1/agents/${id}`)).status).toBe(404);
    expect((await admin().delete(`/api/v1/agents/${id}`)).status).toBe(404);
  });

  it('answers 422 for an id that is no UUID, and never takes `route` for one', async () => {
    expect((await user().get('/api/v1/agents/route')).status).toBe(422);
    const res = await user().post('/api/v1/agents/route', {});
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual(['body.agent_id', 'body.message']);
    expect((await user().post('/api/v1/agents/route/project', {})).status).toBe(422);
  });
});

describe('PATCH /api/v1/agents/{agent_id}', () => {
  it('is for Org admins only, as deleting the agent and changing its rate limits are: 403, and the agent is unchanged', async () => {
    const second = await newProject('Second home');
    const id = await createAgent();
    await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: id }).expect(201);
    const before = {
      agent: (await admin().get(`/api/v1/agents/${id}`)).body,
      limits: (await admin().get(`/api/v1/agents/${id}/rate-limits`)).body,
      assignments: await ctx.db.projectAgent.count({ where: { agentId: id, archivedAt: null } }),
    };
    const zero = { max_requests_per_second: '0', max_requests_per_minute: '0', max_requests_per_hour: '0' };
    for (const client of [editor(), user()]) {
      const answers = [
        await client.patch(`/api/v1/agents/${id}`, { endpoint_url: 'https://attacker.example.com/collect' }),
        await client.patch(`/api/v1/agents/${id}`, { status: 'inactive' }),
        await client.put(`/api/v1/agents/${id}/rate-limits`, zero),
        await client.delete(`/api/v1/agents/${id}`),
      ];
      for (const res of answers) {
        expect({ status: res.status, body: res.body }).toEqual({
          status: 403,
          body: { detail: 'Only an Org admin may do this' },
        });
      }
    }
    expect({
      agent: (await admin().get(`/api/v1/agents/${id}`)).body,
      limits: (await admin().get(`/api/v1/agents/${id}/rate-limits`)).body,
      assignments: await ctx.db.projectAgent.count({ where: { agentId: id, archivedAt: null } }),
    }).toEqual(before);
    expect(before.assignments).toBe(2);
  });

  it('changes the fields given; null keeps required ones and clears optional ones', async () => {
    const id = await createAgent({ description: 'first', capabilities: { a: 1 } });
    const res = await admin().patch(`/api/v1/agents/${id}`, {
      name: null,
      description: null,
      protocol: 'MCP',
      endpoint_url: 'https://mcp.example.com/mcp',
      capabilities: null,
      agent_metadata: { owner: 'ops' },
      status: 'inactive',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Support bot',
      description: null,
      protocol: 'MCP',
      endpoint_url: 'https://mcp.example.com/mcp',
      capabilities: null,
      agent_metadata: { owner: 'ops' },
      status: 'inactive',
    });
    expect((await admin().patch(`/api/v1/agents/${id}`, {})).body).toMatchObject({
      status: 'inactive',
      agent_metadata: { owner: 'ops' },
    });
  });

  it('checks a new endpoint_url as creation does', async () => {
    const id = await createAgent();
    const res = await admin().patch(`/api/v1/agents/${id}`, { endpoint_url: 'http://169.254.169.254/' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'endpoint_url']);
    expect((await admin().patch(`/api/v1/agents/${id}`, { status: 'paused' })).status).toBe(422);
  });
});

describe('rate limits', () => {
  it('start at the configured defaults, as strings', async () => {
    const id = await createAgent();
    expect((await user().get(`/api/v1/agents/${id}/rate-limits`)).body).toEqual({
      id: expect.any(String),
      agent_id: id,
      max_requests_per_second: '10',
      max_requests_per_minute: '120',
      max_requests_per_hour: '5000',
    });
  });

  it('take numbers or strings of digits, and answer strings', async () => {
    const id = await createAgent();
    const res = await admin().put(`/api/v1/agents/${id}/rate-limits`, {
      max_requests_per_second: 2,
      max_requests_per_minute: '30',
      max_requests_per_hour: '0',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agent_id: id,
      max_requests_per_second: '2',
      max_requests_per_minute: '30',
      max_requests_per_hour: '0',
    });
    expect((await user().get(`/api/v1/agents/${id}/rate-limits`)).body).toEqual(res.body);
  });

  it('refuse anything but non-negative integers, and missing values (422)', async () => {
    const id = await createAgent();
    const res = await admin().put(`/api/v1/agents/${id}/rate-limits`, {
      max_requests_per_second: -1,
      max_requests_per_minute: '1.5',
      max_requests_per_hour: null,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual([
      'body.max_requests_per_second',
      'body.max_requests_per_minute',
      'body.max_requests_per_hour',
    ]);
    expect(res.body.detail[0]).toMatchObject({ type: 'int_parsing' });
    expect((await admin().put(`/api/v1/agents/${id}/rate-limits`, { max_requests_per_second: 1 })).status).toBe(422);
  });

  it("answer 404 for another tenant's agent", async () => {
    const id = await createAgent();
    const other = as(ctx.app, globex.admin.token);
    expect((await other.get(`/api/v1/agents/${id}/rate-limits`)).status).toBe(404);
    const body = { max_requests_per_second: 1, max_requests_per_minute: 1, max_requests_per_hour: 1 };
    expect((await other.put(`/api/v1/agents/${id}/rate-limits`, body)).status).toBe(404);
  });

  it.each<[unknown, number | undefined]>([
    [0, 0],
    [7, 7],
    [7.0, 7],
    ['7', 7],
    ['007', 7],
    ['2147483647', 2147483647],
    ['2147483648', undefined],
    [-1, undefined],
    [1.5, undefined],
    ['1.5', undefined],
    ['1e3', undefined],
    [' 7', undefined],
    ['', undefined],
    ['-0', undefined],
    [Number.NaN, undefined],
    [Infinity, undefined],
    [null, undefined],
    [true, undefined],
  ])('parseRateLimit(%j) is %j', (value, parsed) => {
    expect(parseRateLimit(value)).toBe(parsed);
  });
});

describe('project agents', () => {
  it('assigns an agent to another project (Org admin), lists it there, and removes it', async () => {
    const id = await createAgent();
    const second = await newProject('Second');
    expect((await editor().post(`/api/v1/projects/${second}/agents`, { agent_id: id })).status).toBe(403);
    const res = await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: id, role: 'reviewer' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      project_id: second,
      agent_id: id,
      role: 'reviewer',
      created_at: expect.any(String),
      archived_at: null,
    });
    expect((await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: id })).status).toBe(409);
    expect((await user().get(`/api/v1/projects/${second}/agents`)).body.agents).toEqual([res.body]);
    expect((await editor().delete(`/api/v1/projects/${second}/agents/${id}`)).status).toBe(403);
    await admin().delete(`/api/v1/projects/${second}/agents/${id}`).expect(204);
    expect((await user().get(`/api/v1/projects/${second}/agents`)).body.agents).toEqual([]);
    expect((await admin().delete(`/api/v1/projects/${second}/agents/${id}`)).status).toBe(404);
    // Assigned again after its removal.
    await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: id }).expect(201);
  });

  it('keeps an agent in at least one project (409)', async () => {
    const project = await newProject('Only');
    const id = await createAgent({ project_id: project });
    const res = await admin().delete(`/api/v1/projects/${project}/agents/${id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/at least one project/);
  });

  it('keep that one project when two removals race', async () => {
    const [first, second] = [await newProject('First'), await newProject('Second')];
    const id = await createAgent({ project_id: first });
    await admin().post(`/api/v1/projects/${second}/agents`, { agent_id: id }).expect(201);
    const statuses = await Promise.all(
      [first, second].map(async (project) => (await admin().delete(`/api/v1/projects/${project}/agents/${id}`)).status),
    );
    expect(statuses.sort()).toEqual([204, 409]);
  });

  it("refuses another tenant's agent or project (404)", async () => {
    const id = await createAgent();
    const theirs = as(ctx.app, globex.admin.token);
    const theirProject = (await theirs.post('/api/v1/projects', { name: 'Theirs' })).body.id;
    expect((await theirs.post(`/api/v1/projects/${theirProject}/agents`, { agent_id: id })).status).toBe(404);
    expect((await admin().post(`/api/v1/projects/${theirProject}/agents`, { agent_id: id })).status).toBe(404);
    expect((await theirs.get(`/api/v1/projects/${projectId}/agents`)).status).toBe(404);
  });

  it('keep a project from being deleted while they are assigned (409), and a deleted agent leaves its projects', async () => {
    const project = await newProject('Busy');
    const id = await createAgent({ project_id: project });
    const res = await admin().delete(`/api/v1/projects/${project}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('The project still has 1 agent(s); remove them first');
    await admin().delete(`/api/v1/agents/${id}`).expect(204);
    expect((await user().get(`/api/v1/projects/${project}/agents`)).body.agents).toEqual([]);
    await admin().delete(`/api/v1/projects/${project}`).expect(204);
  });
});

describe('the database', () => {
  it("refuses an assignment or rate limit whose agent or project is another tenant's, and a second live assignment", async () => {
    const [a, b] = [await ctx.db.tenant.create({ data: { name: 'A' } }), await ctx.db.tenant.create({ data: { name: 'B' } })];
    const project = await ctx.db.project.create({ data: { tenantId: a.id, name: 'P' } });
    const agent = await ctx.db.agent.create({
      data: { tenantId: b.id, name: 'x', protocol: 'A2A', endpointUrl: 'https://a.example' },
    });
    const refused = { code: 'P2003' };
    await expect(
      ctx.db.projectAgent.create({ data: { tenantId: a.id, projectId: project.id, agentId: agent.id, liveAgentId: agent.id } }),
    ).rejects.toMatchObject(refused);
    await expect(
      ctx.db.agentRateLimit.create({
        data: { tenantId: a.id, agentId: agent.id, maxRequestsPerSecond: 1, maxRequestsPerMinute: 1, maxRequestsPerHour: 1 },
      }),
    ).rejects.toMatchObject(refused);
    const own = await ctx.db.agent.create({
      data: { tenantId: a.id, name: 'y', protocol: 'MCP', endpointUrl: 'https://b.example' },
    });
    const data = { tenantId: a.id, projectId: project.id, agentId: own.id, liveAgentId: own.id };
    const first = await ctx.db.projectAgent.create({ data });
    await expect(ctx.db.projectAgent.create({ data })).rejects.toMatchObject({ code: 'P2002' });
    await ctx.db.projectAgent.update({ where: { id: first.id }, data: { archivedAt: new Date(), liveAgentId: null } });
    await ctx.db.projectAgent.create({ data });
  });
});
