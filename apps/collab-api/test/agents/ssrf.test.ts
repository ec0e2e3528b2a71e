/**
 * Agents' addresses are checked where the connection is made: every address a host name resolves
 * to, at every call and every redirect, and the socket goes to the address checked. Host names
 * here resolve through a table (the system's resolver knows none of them), so reaching an agent
 * through one proves the connection went to the address that was checked.
 */
import type { Resolve } from '../../src/adapters/agents/index.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { appInstance } from './app.js';
import { startA2aAgent, startMcpAgent, startRedirect, type TestAgent } from './servers.js';

const DNS: Record<string, string[]> = {
  'metadata-alias.test': ['169.254.169.254'],
  'internal.test': ['127.0.0.1'],
  'rebind.test': ['93.184.215.14', '127.0.0.1'],
};
const resolve: Resolve = (hostname) => {
  const addresses = DNS[hostname];
  if (!addresses) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  return Promise.resolve(addresses.map((address) => ({ address })));
};

let ctx: TestContext;
let acme: TenantFixture;
let strict: Awaited<ReturnType<typeof appInstance>>;
let lenient: Awaited<ReturnType<typeof appInstance>>;
let agent: TestAgent;
let mcp: TestAgent;
let projectId: string;
let port: string;

const ADDRESS_REFUSED = { code: -32000, data: { reason: 'address_refused' } };

async function register(endpointUrl: string, protocol = 'A2A'): Promise<string> {
  // Registered through the app that allows private addresses; the check that matters is at call time.
  const res = await as(lenient.app, acme.admin.token).post('/api/v1/agents', {
    name: 'Agent',
    protocol,
    endpoint_url: endpointUrl,
    project_id: projectId,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

function route(app: typeof strict.app, agentId: string, message: object = { text: 'hello' }) {
  return as(app, acme.user.token).post('/api/v1/agents/route', { agent_id: agentId, message });
}

beforeAll(async () => {
  [ctx, agent, mcp] = await Promise.all([createTestContext(), startA2aAgent(), startMcpAgent()]);
  strict = await appInstance(ctx, { COLLAB_AGENT_ALLOW_PRIVATE: false }, { resolve });
  lenient = await appInstance(ctx, { COLLAB_AGENT_ALLOW_PRIVATE: true }, { resolve });
  acme = await seedTenant(ctx, 'Acme');
  projectId = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'P' })).body.id;
  port = new URL(agent.url).port;
});
afterAll(async () => {
  await Promise.all([strict.close(), lenient.close(), agent.close(), mcp.close()]);
  await ctx.close();
});

describe('a host name that resolves to a refused address', () => {
  it('is refused at call time when it resolves to the metadata address, whatever COLLAB_AGENT_ALLOW_PRIVATE says', async () => {
    const a2aId = await register('http://metadata-alias.test/');
    const mcpId = await register('http://metadata-alias.test/mcp', 'MCP');
    for (const app of [strict.app, lenient.app]) {
      const res = await route(app, a2aId);
      expect(res.status).toBe(200);
      expect(res.body.error).toEqual({
        ...ADDRESS_REFUSED,
        message: "The agent's host resolves to a metadata address, which is not allowed",
      });
      expect((await route(app, mcpId, { tool: 'echo' })).body.error).toMatchObject(ADDRESS_REFUSED);
    }
  });

  it('is refused when it resolves to a private address without COLLAB_AGENT_ALLOW_PRIVATE, and reached with it', async () => {
    const id = await register(`http://internal.test:${port}`);
    const before = agent.requests.length;
    const refused = await route(strict.app, id);
    expect(refused.body.error).toEqual({
      ...ADDRESS_REFUSED,
      message:
        "The agent's host resolves to a loopback address, which is not allowed (a local deployment allows private and loopback addresses with COLLAB_AGENT_ALLOW_PRIVATE=true)",
    });
    expect(agent.requests.length).toBe(before);
    const reached = await route(lenient.app, id);
    expect(reached.body).toMatchObject({ error: null, result: { message: { parts: [{ text: 'echo: hello' }] } } });
    expect(agent.requests[before]?.headers.host).toBe(`internal.test:${port}`);
  });

  it('is refused when any of its addresses is refused', async () => {
    const id = await register(`http://rebind.test:${port}`);
    expect((await route(strict.app, id)).body.error).toMatchObject(ADDRESS_REFUSED);
  });
});

describe('an address written in endpoint_url', () => {
  it('is checked again at call time, so turning COLLAB_AGENT_ALLOW_PRIVATE off stops calls to agents registered before', async () => {
    const id = await register(agent.url);
    expect((await route(lenient.app, id)).body.error).toBeNull();
    const before = agent.requests.length;
    expect((await route(strict.app, id)).body.error).toEqual({
      ...ADDRESS_REFUSED,
      message:
        "The agent's host is a loopback address, which is not allowed (a local deployment allows private and loopback addresses with COLLAB_AGENT_ALLOW_PRIVATE=true)",
    });
    expect(agent.requests.length).toBe(before);
  });
});

describe('a redirect', () => {
  it.each(['http://169.254.169.254/latest/meta-data/', 'http://metadata-alias.test/latest/meta-data/'])(
    'to %s is refused when its connection is made',
    async (location) => {
      const redirect = await startRedirect(location);
      try {
        const id = await register(redirect.url);
        const res = await route(lenient.app, id);
        expect(res.body.error).toMatchObject(ADDRESS_REFUSED);
        expect(redirect.requests).toHaveLength(1);
        // The MCP SDK follows no redirect to another origin in the first place.
        const mcpId = await register(`${redirect.url}/mcp`, 'MCP');
        expect((await route(lenient.app, mcpId, { tool: 'echo' })).body.error).toMatchObject({
          data: { reason: 'invalid_response' },
        });
      } finally {
        await redirect.close();
      }
    },
  );
});

describe('the gateway', () => {
  it('answers 502 for a refused address, naming no address', async () => {
    const id = await register('http://metadata-alias.test/');
    const res = await as(strict.app, acme.user.token).post(`/api/v1/agents/${id}/gateway`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: 'x' },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: "The agent's host resolves to a metadata address, which is not allowed" });
  });
});
