/**
 * Callers' keys on the network transports, end to end: the SDK's Client with its own
 * `Authorization: Bearer` against inbox-mcp in process, in front of a real inbox-api that knows
 * three keys (INBOX_API_KEYS). A pass-through proxy between the two notes which key each REST call
 * carried, so the tests see that every call of a caller's request or session presents that
 * caller's key, and nothing else.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger, createMetrics, type RunningServer, serve } from '@repo/http';
import { entryCommand, statusLineBeforeBody } from '@repo/testing';
import { InboxApiClient } from '../src/api-client.js';
import { buildHttpApp } from '../src/http-app.js';
import { createMcpServer } from '../src/mcp-server.js';
import { appRoot } from '../src/paths.js';
import { callWithKey, type InboxApi, startInboxApi } from './support/inbox-api.js';
import { type ForwardedRequest, type RecordingProxy, startRecordingProxy } from './support/recording-proxy.js';
import { TEST_TASK_KEY } from './support/task-key.js';

jest.setTimeout(120_000);

const KEY_A = 'key-alpha-0123456789';
const KEY_B = 'key-bravo-0123456789';
const SERVICE_KEY = 'key-service-0123456789';
const KEY_CHECK = '/v1/inboxes?limit=1';

let inboxApi: InboxApi;
let proxy: RecordingProxy;
const servers: RunningServer[] = [];
const clients: Client[] = [];
let inboxA: { id: string; email_address: string };
let inboxB: { id: string; email_address: string };
let thread: string;

/** inbox-api called directly with an operator key. */
const rest = (method: string, path: string, body?: unknown) => callWithKey(inboxApi, KEY_A, method, path, body);

beforeAll(async () => {
  inboxApi = await startInboxApi('inbox_mcp_auth', { apiKeys: [KEY_A, KEY_B, SERVICE_KEY] });
  proxy = await startRecordingProxy(inboxApi.url);
  inboxA = await rest('POST', '/v1/inboxes', { name: 'A', email_username: 'auth-a' });
  inboxB = await rest('POST', '/v1/inboxes', { name: 'B', email_username: 'auth-b' });
  thread = (await rest('POST', '/v1/messages', { inbox_id: inboxA.id, to: [inboxB.email_address], subject: 'Hi', body: 'x' }))
    .thread_id;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  for (const server of servers) await server.shutdown('test');
  await proxy?.close();
  await inboxApi?.stop();
});

/** inbox-mcp in process, reaching inbox-api through the proxy; SERVICE_API_KEY is `serviceKey`. */
async function startMcp(
  transport: 'sse' | 'http',
  options: { allowAnonymous?: boolean; serviceKey?: string } = {},
): Promise<string> {
  const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
  const app = buildHttpApp({
    transport,
    createServer: (api, reach) => createMcpServer({ api, logger, taskKey: TEST_TASK_KEY }, reach),
    api: new InboxApiClient({ baseUrl: proxy.url, apiKey: options.serviceKey }),
    allowAnonymous: options.allowAnonymous ?? false,
    logger,
    metrics: createMetrics({ service: 'inbox-mcp', collectDefault: false }),
    host: '127.0.0.1',
    trustProxyHops: 0,
  });
  const server = await serve(app, { port: 0, host: '127.0.0.1', logger, shutdownTimeoutMs: 1000 });
  servers.push(server);
  return server.url;
}

function transportTo(transport: 'sse' | 'http', base: string, key?: string) {
  const options = key === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${key}` } } };
  return transport === 'sse'
    ? new SSEClientTransport(new URL(`${base}/sse`), options)
    : new StreamableHTTPClientTransport(new URL(`${base}/mcp`), options);
}

async function connect(transport: 'sse' | 'http', base: string, key?: string): Promise<Client> {
  const client = new Client({ name: 'auth-test', version: '1.0.0' });
  await client.connect(transportTo(transport, base, key));
  clients.push(client);
  return client;
}

/** What reached inbox-api while `work` ran. */
async function forwardedDuring(work: () => Promise<unknown>): Promise<ForwardedRequest[]> {
  const before = proxy.forwarded.length;
  await work();
  return proxy.forwarded.slice(before);
}

const keysOf = (requests: ForwardedRequest[]) => [...new Set(requests.map((r) => r.authorization))];

describe.each(['http', 'sse'] as const)('callers with their own keys over %s', (transport) => {
  let base: string;
  beforeAll(async () => {
    base = await startMcp(transport, { serviceKey: SERVICE_KEY });
  });

  it("sends each caller's key, and only theirs, with every REST call of their tools and resources", async () => {
    const [alice, bob] = [await connect(transport, base, KEY_A), await connect(transport, base, KEY_B)];
    const work = (client: Client, inboxId: string) => async () => {
      for (let i = 0; i < 3; i++) {
        const listed = await client.callTool({ name: 'list_messages', arguments: { inbox_id: inboxId } });
        expect(listed.isError).toBeFalsy();
        await client.readResource({ uri: `email://inbox/${inboxId}/recent` });
      }
    };
    // Side by side, so that a key leaking from one caller's request into the other's would show.
    const forwarded = await forwardedDuring(() => Promise.all([work(alice, inboxA.id)(), work(bob, inboxB.id)()]));
    const about = (inboxId: string) => forwarded.filter((r) => r.url.includes(inboxId));
    expect(about(inboxA.id)).toHaveLength(6);
    expect(keysOf(about(inboxA.id))).toEqual([`Bearer ${KEY_A}`]);
    expect(about(inboxB.id)).toHaveLength(6);
    expect(keysOf(about(inboxB.id))).toEqual([`Bearer ${KEY_B}`]);
    expect(keysOf(forwarded)).not.toContain(`Bearer ${SERVICE_KEY}`);
  });

  it('refuses a key inbox-api does not know with HTTP 401 invalid_token, before any tool runs', async () => {
    const forwarded = await forwardedDuring(async () => {
      const client = new Client({ name: 'auth-test', version: '1.0.0' });
      await expect(client.connect(transportTo(transport, base, 'key-wrong-0123'))).rejects.toMatchObject({ code: 401 });
    });
    // The one question asked of inbox-api: whether it knows the key.
    expect(forwarded).toEqual([{ method: 'GET', url: KEY_CHECK, authorization: 'Bearer key-wrong-0123' }]);
    const res = await fetch(`${base}/${transport === 'sse' ? 'sse' : 'mcp'}`, {
      method: transport === 'sse' ? 'GET' : 'POST',
      headers: { authorization: 'Bearer key-wrong-0123', accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource", error="invalid_token", ` +
        'error_description="inbox-api refused this API key"',
    );
  });

  it('refuses a caller without a key with 401, whose challenge leads to the metadata naming this endpoint', async () => {
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await expect(client.connect(transportTo(transport, base))).rejects.toMatchObject({ code: 401 });
    const res = await fetch(`${base}/${transport === 'sse' ? 'sse' : 'mcp'}`, { method: transport === 'sse' ? 'GET' : 'POST' });
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl).toBe(`${base}/.well-known/oauth-protected-resource`);
    expect(await (await fetch(metadataUrl!)).json()).toEqual({
      resource: `${base}/${transport === 'sse' ? 'sse' : 'mcp'}`,
      bearer_methods_supported: ['header'],
      resource_name: 'inbox-mcp',
    });
  });
});

describe.each(['http', 'sse'] as const)('a key scoped to one inbox, over %s', (transport) => {
  it('sees that inbox and nothing of the other: tools and resources', async () => {
    const organization = await rest('POST', '/v1/organizations', { name: `Scoped over ${transport}` });
    const own = await rest('POST', '/v1/inboxes', {
      name: 'Own',
      email_username: `scoped-own-${transport}`,
      organization_id: organization.id,
    });
    const other = await rest('POST', '/v1/inboxes', {
      name: 'Other',
      email_username: `scoped-other-${transport}`,
      organization_id: organization.id,
    });
    const { key } = await rest('POST', '/v1/api-keys', {
      name: 'one inbox',
      organization_id: organization.id,
      inbox_ids: [own.id],
      permissions: ['read', 'send'],
    });
    const client = await connect(transport, await startMcp(transport, { serviceKey: SERVICE_KEY }), key);
    expect((await client.callTool({ name: 'list_messages', arguments: { inbox_id: own.id } })).isError).toBeFalsy();
    const refused = await client.callTool({ name: 'list_messages', arguments: { inbox_id: other.id } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.structuredContent ?? refused.content)).toContain('not_found');
    await expect(client.readResource({ uri: `email://inbox/${other.id}/recent` })).rejects.toThrow(/not.found/i);
    await client.readResource({ uri: `email://inbox/${own.id}/recent` });
    // Nor a thread of an inbox out of scope (inbox A's, in the default organization).
    await expect(client.readResource({ uri: `email://thread/${thread}` })).rejects.toThrow(/not.found/i);
  });
});

describe.each(['http', 'sse'] as const)('a request without a key, over %s', (transport) => {
  const statusLine = (base: string, path: string) => statusLineBeforeBody(Number(new URL(base).port), path);

  it('is refused before its body is read (no one without a key makes the process parse 50 MB), as is a path of nothing', async () => {
    const base = await startMcp(transport);
    expect(await statusLine(base, transport === 'http' ? '/mcp' : '/messages?sessionId=x')).toBe('HTTP/1.1 401 Unauthorized');
    expect(await statusLine(base, '/nowhere')).toBe('HTTP/1.1 404 Not Found');
  });
});

describe('the verdict on a key', () => {
  it('is asked of inbox-api once per period, not once per request', async () => {
    const base = await startMcp('http');
    const started = Date.now();
    const forwarded = await forwardedDuring(async () => {
      const client = await connect('http', base, KEY_B);
      for (let i = 0; i < 5; i++) await client.callTool({ name: 'list_messages', arguments: { inbox_id: inboxB.id } });
    });
    const checks = forwarded.filter((r) => r.url === KEY_CHECK).length;
    // initialize, notifications/initialized and five calls: seven requests, one check per 5 s begun.
    expect(checks).toBeGreaterThanOrEqual(1);
    expect(checks).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 5_000));
    expect(forwarded.filter((r) => r.url.startsWith('/v1/messages'))).toHaveLength(5);
  });
});

/** A raw SSE session: the stream's events, as they come, and the endpoint it announced. */
async function openSseSession(base: string, key: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/sse`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const next = async (): Promise<{ event: string; data: string }> => {
    while (!buffered.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      buffered += value;
    }
    const end = buffered.indexOf('\n\n');
    const block = buffered.slice(0, end);
    buffered = buffered.slice(end + 2);
    const field = (name: string) => [...block.matchAll(/^(\w+): ?(.*)$/gm)].find((match) => match[1] === name)?.[2];
    return { event: field('event') ?? 'message', data: field('data') ?? '' };
  };
  const { event, data } = await next();
  expect(event).toBe('endpoint');
  return { endpoint: new URL(data, base).href, next, close: () => controller.abort() };
}

describe('an SSE session', () => {
  it('takes messages only from the key that opened it: another valid key gets 403, no key or a wrong one 401', async () => {
    const base = await startMcp('sse');
    const session = await openSseSession(base, KEY_A);
    try {
      const post = (authorization: string | undefined, message: object) =>
        fetch(session.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
          body: JSON.stringify(message),
        });
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      };
      expect((await post(`Bearer ${KEY_A}`, initialize)).status).toBe(202);
      expect(JSON.parse((await session.next()).data)).toMatchObject({ id: 1, result: { serverInfo: { name: 'inbox-mcp' } } });
      expect((await post(`Bearer ${KEY_A}`, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);

      const call = {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_messages', arguments: { inbox_id: inboxA.id } },
      };
      const hijacks = await forwardedDuring(async () => {
        const other = await post(`Bearer ${KEY_B}`, call);
        expect(other.status).toBe(403);
        expect(await other.json()).toEqual({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'This SSE session was opened with another key; open your own with GET /sse' },
          id: null,
        });
        expect((await post(undefined, call)).status).toBe(401);
        expect((await post('Bearer key-wrong-0123', call)).status).toBe(401);
        expect((await post('Basic a2V5', call)).status).toBe(401);
      });
      expect(hijacks.filter((r) => r.url !== KEY_CHECK)).toEqual([]);

      // The session itself goes on, for its own key.
      const own = await forwardedDuring(async () => {
        expect((await post(`Bearer ${KEY_A}`, call)).status).toBe(202);
        expect(JSON.parse((await session.next()).data)).toMatchObject({ id: 2, result: { structuredContent: { total: 1 } } });
      });
      expect(own.filter((r) => r.url.startsWith('/v1/messages'))).toEqual([
        { method: 'GET', url: `/v1/messages?inbox_id=${inboxA.id}&limit=50&offset=0`, authorization: `Bearer ${KEY_A}` },
      ]);
    } finally {
      session.close();
    }
  });
});

describe('stateless streamable HTTP', () => {
  it("does not let another key cancel a caller's request", async () => {
    const base = await startMcp('http');
    const post = (key: string, message: object) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${key}`,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify(message),
      });
    const waiting = post(KEY_A, {
      jsonrpc: '2.0',
      id: 77,
      method: 'tools/call',
      params: { name: 'wait_for_reply', arguments: { thread_id: thread, timeout_seconds: 2 } },
    }).then((res) => res.text());
    await delay(500);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'not yours' } };
    expect((await post(KEY_B, cancel)).status).toBe(202);
    // Ran to its timeout: B's notice named a request of B's, which there was none of.
    expect(await waiting).toContain('"status":"timed_out"');
  });
});

describe('--allow-anonymous', () => {
  it('acts with SERVICE_API_KEY for a caller without a key, with their own for one with a key, and refuses a wrong key', async () => {
    const base = await startMcp('http', { allowAnonymous: true, serviceKey: SERVICE_KEY });
    const anonymous = await connect('http', base);
    const keyed = await connect('http', base, KEY_B);
    const calls = (client: Client) =>
      forwardedDuring(() => client.callTool({ name: 'list_messages', arguments: { inbox_id: inboxA.id } }));
    expect(keysOf(await calls(anonymous))).toEqual([`Bearer ${SERVICE_KEY}`]);
    expect(keysOf((await calls(keyed)).filter((r) => r.url !== KEY_CHECK))).toEqual([`Bearer ${KEY_B}`]);
    const wrong = new Client({ name: 'auth-test', version: '1.0.0' });
    await expect(wrong.connect(transportTo('http', base, 'key-wrong-0123'))).rejects.toMatchObject({ code: 401 });
  });

  it("answers a tool call inbox-api refuses (the service key is wrong, or a caller's key was revoked) with an unauthorized result", async () => {
    const base = await startMcp('sse', { allowAnonymous: true, serviceKey: 'key-revoked-0123' });
    const client = await connect('sse', base);
    const result = await client.callTool({ name: 'list_messages', arguments: { inbox_id: inboxA.id } });
    expect(result.isError).toBe(true);
    const [content] = result.content as { type: 'text'; text: string }[];
    expect(JSON.parse(content!.text)).toEqual({
      error: { code: 'unauthorized', message: expect.stringContaining('Bearer'), details: {} },
    });
    await expect(client.readResource({ uri: `email://thread/${thread}` })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('unauthorized'),
    });
  });
});

describe('stdio', () => {
  it('keeps acting with SERVICE_API_KEY', async () => {
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        ...entryCommand('src/main.ts'),
        cwd: appRoot,
        env: { PATH: process.env.PATH ?? '', SERVICE_API_URL: proxy.url, SERVICE_API_KEY: SERVICE_KEY, LOG_LEVEL: 'warn' },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const forwarded = await forwardedDuring(() => client.callTool({ name: 'list_messages', arguments: { inbox_id: inboxA.id } }));
    expect(forwarded).toEqual([
      { method: 'GET', url: `/v1/messages?inbox_id=${inboxA.id}&limit=50&offset=0`, authorization: `Bearer ${SERVICE_KEY}` },
    ]);
  });
});
