/**
 * Per-agent rate limits, per second, minute and hour, counted in the machine's Redis
 * (127.0.0.1:6379) and shared by two instances of the app, as replicas share them.
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { appInstance } from './app.js';
import { startA2aAgent, type TestAgent } from './servers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let ctx: TestContext;
let replica: Awaited<ReturnType<typeof appInstance>>;
let acme: TenantFixture;
let agent: TestAgent;
let projectId: string;

const calls = () => agent.requests.filter((request) => request.body.method === 'SendMessage').length;

async function agentWithLimits(second: number, minute: number, hour: number): Promise<string> {
  const admin = as(ctx.app, acme.admin.token);
  const id = (
    await admin
      .post('/api/v1/agents', { name: 'Limited', protocol: 'A2A', endpoint_url: agent.url, project_id: projectId })
      .expect(201)
  ).body.id as string;
  await admin
    .put(`/api/v1/agents/${id}/rate-limits`, {
      max_requests_per_second: second,
      max_requests_per_minute: String(minute),
      max_requests_per_hour: hour,
    })
    .expect(200);
  return id;
}

function route(app: typeof ctx.app, agentId: string) {
  return as(app, acme.user.token).post('/api/v1/agents/route', { agent_id: agentId, message: { text: 'hi' } });
}

beforeAll(async () => {
  [ctx, agent] = await Promise.all([createTestContext({ COLLAB_AGENT_ALLOW_PRIVATE: 'true', REDIS_URL }), startA2aAgent()]);
  replica = await appInstance(ctx);
  acme = await seedTenant(ctx, 'Acme');
  projectId = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'P' })).body.id;
});
afterAll(async () => {
  await Promise.all([replica.close(), agent.close()]);
  await ctx.close();
});

describe('an agent over its rate limit', () => {
  it('answers 429 with Retry-After on every replica once they used the budget together, and is not called', async () => {
    const id = await agentWithLimits(0, 3, 0);
    const before = calls();
    const statuses = [];
    for (const app of [ctx.app, replica.app, ctx.app]) statuses.push((await route(app, id)).status);
    expect(statuses).toEqual([200, 200, 200]);
    for (const app of [replica.app, ctx.app]) {
      const res = await route(app, id);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ detail: 'Too many requests to this agent: at most 3 per minute' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    expect(calls() - before).toBe(3);
  });

  it('refuses the gateway under the same budget', async () => {
    const id = await agentWithLimits(0, 1, 0);
    await route(replica.app, id).expect(200);
    const res = await as(ctx.app, acme.user.token).post(`/api/v1/agents/${id}/gateway`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: 'x' },
    });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('lets no more than the budget through when requests come at once', async () => {
    const id = await agentWithLimits(0, 0, 4);
    const before = calls();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => route(i % 2 ? ctx.app : replica.app, id)));
    expect(results.filter((res) => res.status === 200)).toHaveLength(4);
    expect(results.filter((res) => res.status === 429)).toHaveLength(6);
    expect(calls() - before).toBe(4);
    expect(results.find((res) => res.status === 429)?.body.detail).toBe('Too many requests to this agent: at most 4 per hour');
  });

  it('counts per second too, and takes nothing from the other windows for a refused request', async () => {
    const id = await agentWithLimits(2, 3, 0);
    expect((await route(ctx.app, id)).status).toBe(200);
    expect((await route(replica.app, id)).status).toBe(200);
    const refused = await route(ctx.app, id);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toBe('Too many requests to this agent: at most 2 per second');
    expect(refused.headers['retry-after']).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // The refused request took no unit from the minute's budget: one is left.
    expect((await route(replica.app, id)).status).toBe(200);
    expect((await route(ctx.app, id)).body.detail).toBe('Too many requests to this agent: at most 3 per minute');
  });

  it('gets an error in its result of a project route, and the others their answers', async () => {
    const project = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'Pair' })).body.id;
    const admin = as(ctx.app, acme.admin.token);
    const limited = await agentWithLimits(0, 1, 0);
    const free = await agentWithLimits(0, 0, 0);
    for (const id of [limited, free]) await admin.post(`/api/v1/projects/${project}/agents`, { agent_id: id }).expect(201);
    await route(ctx.app, limited).expect(200);
    const res = await as(replica.app, acme.user.token).post('/api/v1/agents/route/project', {
      project_id: project,
      message: { text: 'hi' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      expect.objectContaining({
        agent_id: limited,
        result: null,
        error: {
          code: -32000,
          message: 'Too many requests to this agent: at most 1 per minute',
          data: { reason: 'rate_limited', retry_after_seconds: expect.any(Number) },
        },
      }),
      expect.objectContaining({ agent_id: free, error: null }),
    ]);
  });
});

describe('without REDIS_URL', () => {
  it('counts in each process', async () => {
    const alone = await appInstance(ctx, { REDIS_URL: undefined });
    try {
      const id = await agentWithLimits(0, 1, 0);
      await route(alone.app, id).expect(200);
      expect((await route(alone.app, id)).status).toBe(429);
      // The Redis replicas have their own count, which this process never touched.
      await route(ctx.app, id).expect(200);
    } finally {
      await alone.close();
    }
  });
});
