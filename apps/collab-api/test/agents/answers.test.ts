/**
 * What an agent answers, however hostile: an answer past MAX_ANSWER_BYTES (a body whole, or one
 * event of an event stream) ends the call with `invalid_response` (a 502 through the gateway) as
 * soon as the cap is read, and an answer to another JSON-RPC request is no answer. Real agents of
 * servers.ts where their SDKs can give the answer, the scripted one where none would.
 */
import type { Response as ExpressResponse } from 'express';
import request from 'supertest';
import { MAX_ANSWER_BYTES } from '../../src/adapters/agents/network.js';
import { as, bearer, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';
import { type ScriptedAgent, startA2aAgent, startMcpAgent, startScriptedAgent, type TestAgent } from './servers.js';

const TIMEOUT_SECONDS = 20;
const MIB = 2 ** 20;
const TOO_LARGE = { code: -32000, message: "The agent's answer is larger than 8 MiB", data: { reason: 'invalid_response' } };

let ctx: TestContext;
let acme: TenantFixture;
let a2a: TestAgent;
let mcp: TestAgent;
let scripted: ScriptedAgent;
let projectId: string;
let ids: { a2a: string; mcp: string; scriptedA2a: string; scriptedMcp: string };

async function register(protocol: 'A2A' | 'MCP', endpointUrl: string): Promise<string> {
  const res = await as(ctx.app, acme.admin.token).post('/api/v1/agents', {
    name: `${protocol} ${endpointUrl}`,
    protocol,
    endpoint_url: endpointUrl,
    project_id: projectId,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  [ctx, a2a, mcp, scripted] = await Promise.all([
    createTestContext({
      COLLAB_AGENT_ALLOW_PRIVATE: 'true',
      COLLAB_AGENT_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      COLLAB_AGENT_CARD_TTL_SECONDS: '0',
      COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_SECOND: '0',
    }),
    startA2aAgent(),
    startMcpAgent(),
    startScriptedAgent(),
  ]);
  acme = await seedTenant(ctx, 'Acme');
  projectId = (await as(ctx.app, acme.admin.token).post('/api/v1/projects', { name: 'P' })).body.id;
  ids = {
    a2a: await register('A2A', a2a.url),
    mcp: await register('MCP', mcp.url),
    scriptedA2a: await register('A2A', scripted.url),
    scriptedMcp: await register('MCP', `${scripted.url}/mcp`),
  };
});
afterAll(async () => {
  await Promise.all([a2a.close(), mcp.close(), scripted.close()]);
  await ctx.close();
});

let scriptedCard: ScriptedAgent['card'];
beforeAll(() => {
  scriptedCard = scripted.card;
});
afterEach(() => {
  scripted.card = scriptedCard;
});

const route = (agentId: string, message: object) =>
  request(ctx.app).post('/api/v1/agents/route').set(bearer(acme.user.token)).send({ agent_id: agentId, message });
const gateway = (agentId: string, body: object) =>
  request(ctx.app).post(`/api/v1/agents/${agentId}/gateway`).set(bearer(acme.user.token)).send(body);
const sendMessage = (text: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: `m-${text.length}`, role: 'ROLE_USER', parts: [{ text }] } },
});

/**
 * Writes `prefix`, then 'x' a MiB at a time as fast as the service reads, up to 256 MiB, and never
 * ends. Answers how many MiB the service took.
 */
function endless(res: ExpressResponse, prefix: string): () => number {
  const chunk = Buffer.alloc(MIB, 'x');
  let written = 0;
  res.on('error', () => undefined);
  res.write(prefix);
  const pump = () => {
    while (written < 256 && !res.destroyed) {
      written++;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
  return () => written;
}

/** `work`'s result, and by how much this process's heap and buffers grew at most meanwhile (sampled). */
async function withPeakMemory<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const before = used();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 5);
  try {
    const result = await work();
    return { result, growth: Math.max(peak, used()) - before };
  } finally {
    clearInterval(sampler);
  }
}

describe('an answer larger than MAX_ANSWER_BYTES (8 MiB)', () => {
  // Answers hold megabytes: only their sizes and errors are compared, so that a failure prints none of them.
  const UNDER = MAX_ANSWER_BYTES - 64 * 1024;
  const textLength = (message: { parts: { text: string }[] }) => message.parts[0]!.text.length;

  it('is invalid_response in a route result and a 502 through the gateway, from an A2A agent; one just under passes', async () => {
    const passed = await route(ids.a2a, { text: `large ${UNDER}` });
    expect(passed.status).toBe(200);
    expect(passed.body.error).toBeNull();
    expect(textLength(passed.body.result.message)).toBe(UNDER);
    // The text alone is the cap: with the JSON around it, the answer is just past it.
    const refused = await route(ids.a2a, { text: `large ${MAX_ANSWER_BYTES}` });
    expect(refused.status).toBe(200);
    expect(refused.body.error).toEqual(TOO_LARGE);
    expect(refused.body.result).toBeNull();

    const forwarded = await gateway(ids.a2a, sendMessage(`large ${UNDER}`));
    expect(forwarded.status).toBe(200);
    expect(textLength(forwarded.body.result.message)).toBe(UNDER);
    const failed = await gateway(ids.a2a, sendMessage(`large ${MAX_ANSWER_BYTES}`));
    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({ detail: TOO_LARGE.message });
  });

  it("caps each event of an MCP agent's event stream, not the stream: a long stream of small events passes", async () => {
    const passed = await route(ids.mcp, { tool: 'large', arguments: { characters: UNDER } });
    expect(passed.body.error).toBeNull();
    expect(passed.body.result.content[0].text.length).toBe(UNDER);
    const refused = await route(ids.mcp, { tool: 'large', arguments: { characters: MAX_ANSWER_BYTES } });
    expect(refused.body.error).toEqual({ ...TOO_LARGE, message: "An event of the agent's answer is larger than 8 MiB" });
    // 10 MiB of log messages, 256 KiB each, then the answer.
    const chatty = await route(ids.mcp, { tool: 'chatty', arguments: { notifications: 40, characters: 256 * 1024 } });
    expect(chatty.body.error).toBeNull();
    expect(chatty.body.result).toEqual({ content: [{ type: 'text', text: 'done' }] });
  });

  it("refuses an A2A agent's card past the cap", async () => {
    const card = scripted.card();
    scripted.card = () => ({ ...(card as object), description: 'x'.repeat(MAX_ANSWER_BYTES) });
    const before = scripted.requests.length;
    const res = await route(ids.scriptedA2a, { text: 'hi' });
    expect(res.body.error).toEqual(TOO_LARGE);
    expect(scripted.requests.slice(before).map((seen) => seen.path)).toEqual(['/.well-known/agent-card.json']);
  });
});

describe('an answer that passes the cap and never ends', () => {
  it('ends the gateway call at the cap with a 502, having read little more than the cap', async () => {
    let taken = () => 0;
    scripted.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      taken = endless(res, '{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"');
    };
    const { result: res, growth } = await withPeakMemory(() => gateway(ids.scriptedA2a, sendMessage('hi')));
    // Ended by the cap, not the timeout (whose message names it); the rest is what the sockets' buffers took.
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: TOO_LARGE.message });
    expect(taken()).toBeLessThan(40);
    expect(growth).toBeLessThan(128 * MIB);
  });

  it('ends a route to an MCP agent at the cap of one event, though the stream would go on', async () => {
    let taken = () => 0;
    scripted.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      taken = endless(res, 'data: ');
    };
    const { result: res, growth } = await withPeakMemory(() => route(ids.scriptedMcp, { tool: 'echo' }));
    expect(res.body.error).toEqual({ ...TOO_LARGE, message: "An event of the agent's answer is larger than 8 MiB" });
    expect(taken()).toBeLessThan(40);
    expect(growth).toBeLessThan(128 * MIB);
  });
});

describe('an answer to another JSON-RPC request', () => {
  const answerWith = (body: (id: unknown) => object) => {
    scripted.answer = (req, res) => {
      res.json(body((req.body as { id?: unknown }).id));
    };
  };

  it('is no answer through the gateway (502), A2A and MCP alike', async () => {
    answerWith(() => ({
      jsonrpc: '2.0',
      id: 'someone-else',
      result: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } },
    }));
    for (const agentId of [ids.scriptedA2a, ids.scriptedMcp]) {
      const res = await gateway(agentId, { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ detail: 'The agent answered with the response to another JSON-RPC request' });
    }
    answerWith((id) => ({ jsonrpc: '2.0', id: String(id), result: {} }));
    expect((await gateway(ids.scriptedA2a, { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } })).status).toBe(502);
  });

  it("passes the answer to this request's id, and an error whose id is null (the agent could not read the request's)", async () => {
    answerWith((id) => ({ jsonrpc: '2.0', id, result: { ok: true } }));
    const answered = await gateway(ids.scriptedMcp, { jsonrpc: '2.0', id: 'req-8', method: 'tools/list' });
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ jsonrpc: '2.0', id: 'req-8', result: { ok: true } });
    answerWith(() => ({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    const error = await gateway(ids.scriptedA2a, { jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: 'x' } });
    expect(error.status).toBe(200);
    expect(error.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });
});

describe('an answer nested deeper than a request may be (MAX_INPUT_NESTING)', () => {
  const DEEP = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
  const NESTED = { code: -32000, message: 'The agent answered with objects and arrays nested more than 500 levels deep' };

  it('is invalid_response in a route result and a 502 through the gateway, not a 500', async () => {
    // An MCP agent that answers the handshake, then every call with a result holding 10 KB of brackets.
    scripted.answer = (req, res) => {
      const body = req.body as { id?: unknown; method?: string };
      if (req.method !== 'POST') return void res.status(405).end();
      if (body.id === undefined) return void res.status(202).end();
      if (body.method === 'initialize') {
        return void res.json({
          jsonrpc: '2.0',
          id: body.id,
          result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1' } },
        });
      }
      res.type('application/json').send(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"content":[],"x":${DEEP}}}`);
    };
    const routed = await route(ids.scriptedMcp, { tool: 't', arguments: {} });
    expect(routed.status).toBe(200);
    expect(routed.body.error).toEqual({ ...NESTED, data: { reason: 'invalid_response' } });
    const forwarded = await gateway(ids.scriptedMcp, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't' } });
    expect(forwarded.status).toBe(502);
    expect(forwarded.body).toEqual({ detail: NESTED.message });
  });
});
