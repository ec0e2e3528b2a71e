/**
 * The gateway answers 202 with no body only for an MCP notification; a request with an id that
 * gets no JSON-RPC response from the agent is 502 (an empty 202 was passed on: the caller got
 * neither a response nor an error).
 */
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { startScriptedAgent, type ScriptedAgent } from './servers.js';

let ctx: TestContext;
let acme: TenantFixture;
let mcp: ScriptedAgent;
let agentId: string;

beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_AGENT_ALLOW_PRIVATE: 'true', COLLAB_AGENT_TIMEOUT_SECONDS: '2' });
  acme = await seedTenant(ctx, 'Acme');
  mcp = await startScriptedAgent();
  const projectId = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'P' }).expect(201)).body.id;
  agentId = (
    await as(ctx.app, acme.admin.token)
      .post('/api/v1/agents', { name: 'MCP', protocol: 'MCP', endpoint_url: `${mcp.url}/mcp`, project_id: projectId })
      .expect(201)
  ).body.id;
});
afterAll(async () => {
  await mcp.close();
  await ctx.close();
});

it('answers 502, not an empty 202, when an MCP agent answers a request (with an id) with 202 and no body', async () => {
  mcp.answer = (_req, res) => {
    res.status(202).end();
  };
  const res = await as(ctx.app, acme.admin.token).post(`/api/v1/agents/${agentId}/gateway`, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/list',
  });
  expect(res.status).toBe(502);
});

it('passes on the 202 of a notification', async () => {
  mcp.answer = (_req, res) => {
    res.status(202).end();
  };
  const res = await as(ctx.app, acme.admin.token).post(`/api/v1/agents/${agentId}/gateway`, {
    jsonrpc: '2.0',
    method: 'notifications/initialized',
  });
  expect(res.status).toBe(202);
});
