import { closedPort } from '@repo/testing';
import request from 'supertest';
import { as, bearer, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { startA2aAgent, startA2aV03Agent, startMcpAgent, type TestAgent } from './servers.js';

let ctx: TestContext;
let acme: TenantFixture;
let globex: TenantFixture;
let a2a: TestAgent;
let v03: TestAgent;
let mcp: Awaited<ReturnType<typeof startMcpAgent>>;
let ids: { a2a: string; v03: string; mcp: string; globexA2a: string };

async function register(tenant: TenantFixture, protocol: string, endpointUrl: string): Promise<string> {
  const admin = as(ctx.app, tenant.admin.token);
  const project = (await admin.post('/api/v1/projects', { name: 'P' })).body.id;
  return (
    await admin.post('/api/v1/agents', { name: 'Agent', protocol, endpoint_url: endpointUrl, project_id: project }).expect(201)
  ).body.id as string;
}

function gateway(tenant: TenantFixture, agentId: string, body: object, headers: Record<string, string> = {}) {
  return request(ctx.app).post(`/api/v1/agents/${agentId}/gateway`).set(bearer(tenant.user.token)).set(headers).send(body);
}

beforeAll(async () => {
  [ctx, a2a, v03, mcp] = await Promise.all([
    createTestContext({ COLLAB_AGENT_ALLOW_PRIVATE: 'true' }),
    startA2aAgent(),
    startA2aV03Agent(),
    startMcpAgent(),
  ]);
  acme = await seedTenant(ctx, 'Acme');
  globex = await seedTenant(ctx, 'Globex');
  ids = {
    a2a: await register(acme, 'A2A', a2a.url),
    v03: await register(acme, 'A2A', v03.url),
    mcp: await register(acme, 'MCP', mcp.url),
    globexA2a: await register(globex, 'A2A', a2a.url),
  };
});
afterAll(async () => {
  await Promise.all([a2a.close(), v03.close(), mcp.close()]);
  await ctx.close();
});

describe('POST /api/v1/agents/{agent_id}/gateway to an A2A agent', () => {
  it("passes JSON-RPC through to the card's interface, with the caller's request id, and task ids bound to the tenant", async () => {
    const sent = await gateway(acme, ids.a2a, {
      jsonrpc: '2.0',
      id: 'req-1',
      method: 'SendMessage',
      params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'task via gateway' }] } },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      jsonrpc: '2.0',
      id: 'req-1',
      result: { task: { id: expect.stringMatching(/\.[A-Za-z0-9_-]{22}$/), status: { state: 'TASK_STATE_INPUT_REQUIRED' } } },
    });
    const taskId = sent.body.result.task.id as string;
    const seen = a2a.requests.at(-1)!;
    expect(seen.path).toBe('/a2a/jsonrpc');
    expect(seen.body).toMatchObject({ id: 'req-1', method: 'SendMessage' });
    expect(seen.headers['a2a-version']).toBe('1.0');
    expect(seen.headers.authorization).toBeUndefined();

    const got = await gateway(acme, ids.a2a, { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: taskId } });
    expect(got.body).toMatchObject({ id: 2, result: { id: taskId, status: { state: 'TASK_STATE_INPUT_REQUIRED' } } });
    expect(a2a.requests.at(-1)!.body.params).toEqual({ id: taskId.slice(0, taskId.lastIndexOf('.')) });

    // Another tenant, through its own agent at the same address, cannot read it.
    const theirs = await gateway(globex, ids.globexA2a, { jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: taskId } });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ id: 3, error: { code: -32001 } });
    expect(a2a.requests.at(-1)!.body.params).toEqual({ id: `${globex.id}:${taskId}` });
  });

  it('sends 0.3 methods to a 0.3 agent, and answers a method of a version the agent lacks with -32009', async () => {
    const sent = await gateway(acme, ids.v03, {
      jsonrpc: '2.0',
      id: 7,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm-2', role: 'user', parts: [{ kind: 'text', text: 'old style' }] } },
    });
    expect(sent.body).toMatchObject({ id: 7, result: { kind: 'message', parts: [{ kind: 'text', text: 'echo: old style' }] } });
    expect(v03.requests.at(-1)!.headers['a2a-version']).toBe('0.3');
    const before = v03.requests.length;
    const refused = await gateway(acme, ids.v03, { jsonrpc: '2.0', id: 8, method: 'SendMessage', params: {} });
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      id: 8,
      error: { code: -32009, message: 'The agent offers no A2A 1.0 JSON-RPC interface' },
    });
    expect(v03.requests.length).toBe(before);
  });

  it('refuses streaming methods with -32004', async () => {
    const res = await gateway(acme, ids.a2a, { jsonrpc: '2.0', id: 9, method: 'SendStreamingMessage', params: {} });
    expect(res.body).toMatchObject({ id: 9, error: { code: -32004 } });
  });

  it("lists another tenant's tasks to no one: ListTasks passes with a contextId only, bound to the caller", async () => {
    const secret = 'task for acme only: the quarterly numbers';
    const sent = await gateway(acme, ids.a2a, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm-list', contextId: 'acme-ctx', role: 'ROLE_USER', parts: [{ text: secret }] } },
    });
    expect(sent.body.result.task.contextId).toBe('acme-ctx');
    const before = a2a.requests.length;
    // Unscoped, the agent (which knows no tenants) would answer with every tenant's tasks: refused before it is asked.
    const unscoped = await gateway(globex, ids.globexA2a, { jsonrpc: '2.0', id: 2, method: 'ListTasks', params: {} });
    expect(unscoped.body).toMatchObject({ id: 2, error: { code: -32602 } });
    expect(a2a.requests.length).toBe(before);
    // Another tenant naming the context gets its own namespace's (none); the owner gets its task.
    const theirs = await gateway(globex, ids.globexA2a, {
      jsonrpc: '2.0',
      id: 3,
      method: 'ListTasks',
      params: { contextId: 'acme-ctx' },
    });
    expect(a2a.requests.at(-1)!.body.params).toEqual({ contextId: `${globex.id}:acme-ctx` });
    expect(JSON.stringify(theirs.body)).not.toContain(secret);
    const mine = await gateway(acme, ids.a2a, { jsonrpc: '2.0', id: 4, method: 'ListTasks', params: { contextId: 'acme-ctx' } });
    expect(JSON.stringify(mine.body)).toContain(secret);
  });

  it("refuses with 422 a request nested 20,000 deep (params, or an agent's capabilities), never asking the agent", async () => {
    const deep = (depth: number) => '{"k":'.repeat(depth) + '1' + '}'.repeat(depth);
    const before = a2a.requests.length;
    const call = await request(ctx.app)
      .post(`/api/v1/agents/${ids.a2a}/gateway`)
      .set(bearer(acme.user.token))
      .set('content-type', 'application/json')
      .send(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${deep(20_000)}}`);
    expect(call.status).toBe(422);
    expect(call.body.detail).toEqual([expect.objectContaining({ type: 'too_deep' })]);
    expect(a2a.requests.length).toBe(before);
    const project = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'Deep' })).body.id;
    const created = await request(ctx.app)
      .post('/api/v1/agents')
      .set(bearer(acme.admin.token))
      .set('content-type', 'application/json')
      .send(
        `{"name":"Deep","protocol":"A2A","endpoint_url":"${a2a.url}","project_id":"${project}","capabilities":${deep(20_000)}}`,
      );
    expect(created.status).toBe(422);
    expect(await ctx.db.agent.count({ where: { name: 'Deep' } })).toBe(0);
  });

  it('refuses a method it does not know with -32601, without asking the agent', async () => {
    const before = a2a.requests.length;
    const res = await gateway(acme, ids.a2a, { jsonrpc: '2.0', id: 5, method: 'x-vendor/listEverything', params: {} });
    expect(res.body).toMatchObject({ id: 5, error: { code: -32601 } });
    expect(a2a.requests.length).toBe(before);
  });
});

describe('task and context ids in either spelling: camelCase, or the proto field names the agent reads too', () => {
  /** Acme starts a task (input required) holding `secret`: its sealed ids, and the agent's own ones. */
  async function acmeTask(secret: string) {
    const sent = await gateway(acme, ids.a2a, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${secret}`, role: 'ROLE_USER', parts: [{ text: `task ${secret}` }] } },
    });
    const task = sent.body.result.task as { id: string; contextId: string };
    const unsealed = (id: string) => id.slice(0, id.lastIndexOf('.'));
    return { sealed: task, raw: { id: unsealed(task.id), contextId: unsealed(task.contextId) } };
  }

  it("another tenant naming acme's task in snake_case reaches it in its own namespace only", async () => {
    const secret = 'acme-secret-quarterly-numbers';
    const { raw } = await acmeTask(secret);
    // The agent's ids are no secret (each sealed id shows its own); the binding is what keeps them apart.
    const res = await gateway(globex, ids.globexA2a, {
      jsonrpc: '2.0',
      id: 2,
      method: 'SendMessage',
      params: {
        message: {
          messageId: 'm-evil',
          role: 'ROLE_USER',
          task_id: raw.id,
          context_id: raw.contextId,
          parts: [{ text: 'more' }],
        },
      },
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(secret);
    expect(a2a.requests.at(-1)!.body.params).toMatchObject({
      message: { task_id: `${globex.id}:${raw.id}`, context_id: `${globex.id}:${raw.contextId}` },
    });

    const push = await gateway(globex, ids.globexA2a, {
      jsonrpc: '2.0',
      id: 3,
      method: 'CreateTaskPushNotificationConfig',
      params: { task_id: raw.id, id: 'cfg-1', url: 'https://globex.example/hook' },
    });
    expect(push.status).toBe(200);
    expect(a2a.requests.at(-1)!.body.params).toEqual({
      task_id: `${globex.id}:${raw.id}`,
      id: 'cfg-1',
      url: 'https://globex.example/hook',
    });
  });

  it('lets the owner continue its task with snake_case ids, unsealed like camelCase ones', async () => {
    const { sealed, raw } = await acmeTask('own');
    const res = await gateway(acme, ids.a2a, {
      jsonrpc: '2.0',
      id: 4,
      method: 'SendMessage',
      params: {
        message: {
          message_id: 'm-own',
          role: 'ROLE_USER',
          task_id: sealed.id,
          context_id: sealed.contextId,
          parts: [{ text: 'more' }],
        },
      },
    });
    expect(res.body.result.task).toMatchObject({ id: sealed.id, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(a2a.requests.at(-1)!.body.params).toMatchObject({ message: { task_id: raw.id, context_id: raw.contextId } });
  });

  it('refuses with -32602 an id that is no string, which the agent would read as its string, without asking the agent', async () => {
    const { raw } = await acmeTask('wrapped');
    const before = a2a.requests.length;
    const getTask = await gateway(globex, ids.globexA2a, { jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: [raw.id] } });
    expect(getTask.body).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: {
        code: -32602,
        message: "params.id must be a string or null: task and context ids are bound to the caller's tenant",
      },
    });
    const send = await gateway(globex, ids.globexA2a, {
      jsonrpc: '2.0',
      id: 6,
      method: 'SendMessage',
      params: { message: { messageId: 'm-wrapped', role: 'ROLE_USER', taskId: [raw.id], parts: [{ text: 'more' }] } },
    });
    expect(send.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^params\.message\.taskId must be/) });
    expect(a2a.requests.length).toBe(before);
  });

  it('passes ListTasks with a context_id, bound to the caller like a contextId', async () => {
    const res = await gateway(globex, ids.globexA2a, {
      jsonrpc: '2.0',
      id: 7,
      method: 'ListTasks',
      params: { context_id: 'acme-ctx' },
    });
    expect(res.body).toMatchObject({ id: 7, result: { tasks: [] } });
    expect(a2a.requests.at(-1)!.body.params).toEqual({ context_id: `${globex.id}:acme-ctx` });
  });
});

describe('POST /api/v1/agents/{agent_id}/gateway to an MCP agent', () => {
  it('passes the session through, its id bound to the tenant, and streams the answer as it comes', async () => {
    const init = await gateway(
      acme,
      ids.mcp,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
      },
      { accept: 'application/json, text/event-stream' },
    );
    expect(init.status).toBe(200);
    expect(init.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(init.text).toContain('"protocolVersion"');
    const session = init.headers['mcp-session-id'] as string;
    const [agentSession] = mcp.sessions();
    expect(session).toBe(`${agentSession}.${session.split('.').pop()}`);

    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await gateway(acme, ids.mcp, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    expect(initialized.status).toBe(202);
    const called = await gateway(
      acme,
      ids.mcp,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      headers,
    );
    expect(called.status).toBe(200);
    expect(called.text).toContain('echo: x');
    expect(mcp.requests.at(-1)!.headers['mcp-session-id']).toBe(agentSession);

    // The session is not another tenant's to use, through its own agent at the same address.
    const globexMcp = await register(globex, 'MCP', mcp.url);
    const before = mcp.requests.length;
    const theirs = await gateway(globex, globexMcp, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ id: null, error: { message: 'Session not found' } });
    expect(mcp.requests[before]!.headers['mcp-session-id']).toBe(`${globex.id}:${session}`);
  });
});

describe('the gateway', () => {
  it("answers 404 for another tenant's agent, 409 for an inactive one, 422 for a body that is no JSON-RPC request", async () => {
    expect((await gateway(globex, ids.a2a, { jsonrpc: '2.0', id: 1, method: 'GetTask' })).status).toBe(404);
    const res = await gateway(acme, ids.a2a, { id: 1, method: '' });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual(['body.jsonrpc', 'body.method']);
    const resting = await register(acme, 'A2A', a2a.url);
    await as(ctx.app, acme.admin.token).patch(`/api/v1/agents/${resting}`, { status: 'inactive' }).expect(200);
    expect((await gateway(acme, resting, { jsonrpc: '2.0', id: 1, method: 'GetTask' })).status).toBe(409);
  });

  it('answers 502 when the agent cannot be reached, never naming its address', async () => {
    const port = await closedPort();
    const down = await register(acme, 'MCP', `http://127.0.0.1:${port}/mcp`);
    const res = await gateway(acme, down, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'The agent could not be reached' });
    expect(res.text).not.toContain(String(port));
  });
});
