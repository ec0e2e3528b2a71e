import { closedPort } from '@repo/testing';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { startA2aAgent, startA2aV03Agent, startMcpAgent, type TestAgent } from './servers.js';

const TIMEOUT_SECONDS = 2;

let ctx: TestContext;
let acme: TenantFixture;
let globex: TenantFixture;
let a2a: TestAgent;
let v03: TestAgent;
let mcp: Awaited<ReturnType<typeof startMcpAgent>>;
let projectId: string;
let ids: { a2a: string; v03: string; mcp: string };

const admin = () => as(ctx.app, acme.admin.token);
const user = () => as(ctx.app, acme.user.token);

async function register(client: ReturnType<typeof as>, project: string, name: string, protocol: string, endpointUrl: string) {
  const res = await client.post('/api/v1/agents', { name, protocol, endpoint_url: endpointUrl, project_id: project });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  [ctx, a2a, v03, mcp] = await Promise.all([
    createTestContext({ COLLAB_AGENT_ALLOW_PRIVATE: 'true', COLLAB_AGENT_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) }),
    startA2aAgent(),
    startA2aV03Agent(),
    startMcpAgent(),
  ]);
  acme = await seedTenant(ctx, 'Acme');
  globex = await seedTenant(ctx, 'Globex');
  projectId = (await admin().post('/api/v1/projects', { name: 'Support' })).body.id;
  ids = {
    a2a: await register(admin(), projectId, 'Echo 1.0', 'A2A', a2a.url),
    v03: await register(admin(), projectId, 'Echo 0.3', 'A2A', v03.url),
    mcp: await register(admin(), projectId, 'Echo MCP', 'MCP', mcp.url),
  };
});
afterAll(async () => {
  await Promise.all([a2a.close(), v03.close(), mcp.close()]);
  await ctx.close();
});

const rpcCalls = (agent: TestAgent) =>
  agent.requests.filter((request) => request.method === 'POST').map((request) => request.body);

let globexProjectId: string | undefined;
async function globexProject(): Promise<string> {
  globexProjectId ??= (await as(ctx.app, globex.admin.token).post('/api/v1/projects', { name: 'Theirs' })).body.id as string;
  return globexProjectId;
}

describe('POST /api/v1/agents/route to an A2A 1.0 agent', () => {
  it('sends SendMessage, converting {"text"}, and answers with the JSON-RPC result, the request id and the version', async () => {
    const before = a2a.requests.length;
    const res = await user().post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'hello' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      agent_id: ids.a2a,
      protocol: 'A2A',
      protocol_version: '1.0',
      result: {
        message: expect.objectContaining({ role: 'ROLE_AGENT', parts: [{ text: 'echo: hello' }], messageId: expect.any(String) }),
      },
      error: null,
      duration_ms: expect.any(Number),
    });
    const sent = a2a.requests.slice(before).find((request) => request.body?.method);
    expect(sent?.body).toMatchObject({
      jsonrpc: '2.0',
      method: 'SendMessage',
      params: { message: { role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
    });
    expect(sent?.headers['x-request-id']).toBe(res.body.id);
    expect(sent?.headers['a2a-version']).toBe('1.0');
  });

  it('converts an A2A 0.3 message to 1.0', async () => {
    const res = await user().post('/api/v1/agents/route', {
      agent_id: ids.a2a,
      message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'from 0.3' }] },
    });
    expect(res.body.result.message.parts).toEqual([{ text: 'echo: from 0.3' }]);
    expect(rpcCalls(a2a).at(-1)?.params).toMatchObject({
      message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'from 0.3' }] },
    });
  });

  it('reads the agent card once and uses it again (COLLAB_AGENT_CARD_TTL_SECONDS)', async () => {
    const cardReads = () => a2a.requests.filter((request) => request.path === '/.well-known/agent-card.json').length;
    const before = cardReads();
    await user()
      .post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'again' } })
      .expect(200);
    await user()
      .post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'and again' } })
      .expect(200);
    expect(cardReads()).toBe(before);
  });
});

describe('task and context ids', () => {
  it('continue a task with the ids a result handed out; the agent gets its own task id back', async () => {
    const first = await user().post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'task: plan a trip' } });
    const { task } = first.body.result;
    expect(task).toMatchObject({ status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    const next = await user().post('/api/v1/agents/route', {
      agent_id: ids.a2a,
      message: { text: 'to Lisbon', taskId: task.id, contextId: task.contextId },
    });
    expect(next.body.result.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    const sent = rpcCalls(a2a).at(-1)?.params?.message as { taskId: string; contextId: string };
    expect(task.id).toBe(`${sent.taskId}.${(task.id as string).split('.').pop()}`);
  });

  it("never reach another tenant's task: its ids reach the agent in the caller's namespace", async () => {
    const started = await user().post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'task: secret' } });
    const { task } = started.body.result;
    const theirAgent = await register(as(ctx.app, globex.admin.token), await globexProject(), 'Theirs', 'A2A', a2a.url);
    const res = await as(ctx.app, globex.user.token).post('/api/v1/agents/route', {
      agent_id: theirAgent,
      message: { text: 'what was it?', taskId: task.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.result).toBeNull();
    expect(res.body.error).toMatchObject({ code: -32001 });
    expect(rpcCalls(a2a).at(-1)?.params).toMatchObject({ message: { taskId: `${globex.id}:${task.id}` } });
  });

  it("put a context id of the caller's choosing in its tenant's namespace, and give it back as it was", async () => {
    const res = await user().post('/api/v1/agents/route', { agent_id: ids.v03, message: { text: 'hello', contextId: 'chat-7' } });
    expect(res.body.result).toMatchObject({ kind: 'message', contextId: 'chat-7' });
    expect(rpcCalls(v03).at(-1)?.params).toMatchObject({ message: { contextId: `${acme.id}:chat-7` } });
  });
});

describe('which agents a message goes to', () => {
  it('not to an inactive agent (409), nor through a project the agent is not assigned to (404)', async () => {
    const resting = await register(admin(), projectId, 'Resting', 'A2A', a2a.url);
    await admin().patch(`/api/v1/agents/${resting}`, { status: 'inactive' }).expect(200);
    const refused = await user().post('/api/v1/agents/route', { agent_id: resting, message: { text: 'hi' } });
    expect(refused.status).toBe(409);
    const other = (await admin().post('/api/v1/projects', { name: 'Elsewhere' })).body.id;
    const res = await user().post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'hi' }, project_id: other });
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('The agent is not assigned to this project');
    const assigned = await user().post('/api/v1/agents/route', {
      agent_id: ids.a2a,
      message: { text: 'hi' },
      project_id: projectId,
    });
    expect(assigned.status).toBe(200);
    expect(
      (await as(ctx.app, globex.user.token).post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'hi' } })).status,
    ).toBe(404);
    await admin().delete(`/api/v1/agents/${resting}`).expect(204);
  });
});

describe('POST /api/v1/agents/route to an A2A 0.3 agent', () => {
  it('reads its 0.3 card, sends message/send with the message in 0.3 shape, and answers in 0.3 shape', async () => {
    const res = await user().post('/api/v1/agents/route', {
      agent_id: ids.v03,
      message: { role: 'ROLE_USER', parts: [{ text: 'hi there' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ protocol: 'A2A', protocol_version: '0.3', error: null });
    expect(res.body.result).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'echo: hi there' }] });
    expect(rpcCalls(v03).at(-1)).toMatchObject({
      method: 'message/send',
      params: { message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'hi there' }] } },
    });
  });
});

describe('POST /api/v1/agents/route to an MCP agent', () => {
  it('calls the tool over streamable HTTP and answers with the tools/call result', async () => {
    const res = await user().post('/api/v1/agents/route', {
      agent_id: ids.mcp,
      message: { tool: 'echo', arguments: { text: 'ping' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      protocol: 'MCP',
      protocol_version: expect.any(String),
      result: { content: [{ type: 'text', text: 'echo: ping' }] },
      error: null,
    });
    expect(rpcCalls(mcp).map((body) => body.method)).toEqual(expect.arrayContaining(['initialize', 'tools/call']));
    // Its session was ended after the call.
    expect(mcp.sessions()).toEqual([]);
  });

  it('carries what the agent answered for a tool it does not have', async () => {
    const res = await user().post('/api/v1/agents/route', { agent_id: ids.mcp, message: { tool: 'nope' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      result: { content: [{ type: 'text', text: expect.stringContaining('nope') }], isError: true },
      error: null,
    });
  });

  it('answers 422 for a message without a tool, before anything is sent', async () => {
    const before = mcp.requests.length;
    const res = await user().post('/api/v1/agents/route', { agent_id: ids.mcp, message: { text: 'hi' } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'message', 'tool'], type: 'missing' })]);
    expect(mcp.requests.length).toBe(before);
  });
});

describe('timeouts', () => {
  it('come back in the result after COLLAB_AGENT_TIMEOUT_SECONDS, A2A and MCP alike', async () => {
    const [slowA2a, slowMcp] = await Promise.all([
      user().post('/api/v1/agents/route', { agent_id: ids.a2a, message: { text: 'slow' } }),
      user().post('/api/v1/agents/route', { agent_id: ids.mcp, message: { tool: 'slow' } }),
    ]);
    for (const res of [slowA2a, slowMcp]) {
      expect(res.status).toBe(200);
      expect(res.body.result).toBeNull();
      expect(res.body.error).toEqual({
        code: -32000,
        message: `The agent did not answer within ${TIMEOUT_SECONDS} s`,
        data: { reason: 'timeout' },
      });
      expect(res.body.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 50);
    }
  });
});

describe('POST /api/v1/agents/route/project', () => {
  it('sends to every active agent of the project at once, one result each, a failing one hiding none', async () => {
    const down = await register(admin(), projectId, 'Down', 'A2A', `http://127.0.0.1:${await closedPort()}`);
    const inactive = await register(admin(), projectId, 'Resting', 'A2A', a2a.url);
    await admin().patch(`/api/v1/agents/${inactive}`, { status: 'inactive' }).expect(200);
    const res = await user().post('/api/v1/agents/route/project', {
      project_id: projectId,
      message: { text: 'all hands', tool: 'echo', arguments: { text: 'all hands' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.map((result: { agent_id: string }) => result.agent_id)).toEqual([ids.a2a, ids.v03, ids.mcp, down]);
    const [one, two, three, four] = res.body;
    expect(one.result.message.parts).toEqual([{ text: 'echo: all hands' }]);
    expect(two.result.parts).toEqual([{ kind: 'text', text: 'echo: all hands' }]);
    expect(three.result.content).toEqual([{ type: 'text', text: 'echo: all hands' }]);
    expect(four).toMatchObject({
      result: null,
      protocol_version: null,
      error: { code: -32000, message: 'The agent could not be reached', data: { reason: 'unreachable' } },
    });
    expect(JSON.stringify(four)).not.toContain('127.0.0.1');
    await admin().delete(`/api/v1/agents/${down}`).expect(204);
    await admin().delete(`/api/v1/agents/${inactive}`).expect(204);
  });

  it('reports a message that does not suit one agent in its result only', async () => {
    const res = await user().post('/api/v1/agents/route/project', { project_id: projectId, message: { text: 'only A2A' } });
    expect(res.status).toBe(200);
    const byAgent = Object.fromEntries(res.body.map((result: { agent_id: string }) => [result.agent_id, result]));
    expect(byAgent[ids.a2a].error).toBeNull();
    expect(byAgent[ids.mcp].error).toMatchObject({ code: -32602, data: { reason: 'invalid_message' } });
  });

  it("answers 404 for another tenant's project", async () => {
    const res = await as(ctx.app, globex.admin.token).post('/api/v1/agents/route/project', {
      project_id: projectId,
      message: { text: 'x' },
    });
    expect(res.status).toBe(404);
  });
});
