/**
 * How the REST client maps what the API answers (or does not), and what an MCP client sees of
 * it, against a small HTTP server standing in for inbox-api and a port nothing listens on.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createLogger } from '@repo/http';
import { closedPort } from '@repo/testing';
import { InboxApiClient, InboxApiError, InboxApiUnreachableError } from '../src/api-client.js';
import { askInboxApi } from '../src/auth/key-checks.js';
import { createMcpServer } from '../src/mcp-server.js';
import { TEST_TASK_KEY } from './support/task-key.js';

const thread = {
  id: 't1',
  inbox_id: 'i1',
  subject: 'Hi',
  last_message_at: '2026-03-01T10:00:00.000Z',
  summary: null,
  messages: [],
};

let stub: Server;
let stubUrl: string;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  stub = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    // `/verdict/<status>/...`: inbox-api answering a key check with that status.
    const verdict = /^\/verdict\/(\d{3})\/v1\/inboxes\?limit=1$/.exec(req.url ?? '');
    if (verdict) {
      const status = Number(verdict[1]);
      return status === 200
        ? json(200, { items: [], count: 0, total: 0, next_page_token: null })
        : json(status, { error: { code: 'some_code', message: 'Some message', details: {} } });
    }
    switch (req.url) {
      case '/prefix/v1/threads/t1':
        return json(200, { ...thread, unexpected_new_field: true });
      case '/prefix/v1/threads/missing':
        return json(404, { error: { code: 'not_found', message: 'Thread not found', details: { thread_id: 'missing' } } });
      case '/prefix/v1/threads/proxy':
        return res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
      case '/prefix/v1/threads/drifted':
        return json(200, { id: 't1' });
      case '/prefix/v1/threads/slow':
        return; // never answers
      default:
        return json(404, { error: { code: 'not_found', message: `No route for GET ${req.url}`, details: {} } });
    }
  });
  stub.listen(0, '127.0.0.1');
  await once(stub, 'listening');
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});
afterAll(async () => {
  stub.closeAllConnections();
  await new Promise((resolve) => stub.close(resolve));
});

describe('the REST client', () => {
  const api = () => new InboxApiClient({ baseUrl: `${stubUrl}/prefix/`, apiKey: 'key-1', timeoutMs: 500 });

  it('keeps the base URL path, sends the API key as bearer token, and returns only the fields it knows', async () => {
    expect(await api().getThread('t1')).toEqual(thread);
    expect(seen.at(-1)).toMatchObject({ url: '/prefix/v1/threads/t1', headers: { authorization: 'Bearer key-1' } });
  });

  it("turns the API's error envelope into an InboxApiError with its status, code, message and details", async () => {
    await expect(api().getThread('missing')).rejects.toMatchObject({
      name: 'InboxApiError',
      status: 404,
      code: 'not_found',
      message: 'Thread not found',
      details: { thread_id: 'missing' },
    });
  });

  it('names an answer it cannot read as upstream_error, with the HTTP status', async () => {
    const proxy = await api()
      .getThread('proxy')
      .catch((error: unknown) => error);
    expect(proxy).toBeInstanceOf(InboxApiError);
    expect(proxy).toMatchObject({
      status: 502,
      code: 'upstream_error',
      message: 'inbox API answered GET /v1/threads/proxy with HTTP 502',
    });
    await expect(api().getThread('drifted')).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'inbox API answered GET /v1/threads/drifted with a body this server does not understand',
    });
  });

  it('says the API is unreachable, and where, when nothing listens or no answer comes in time', async () => {
    const port = await closedPort();
    const down = new InboxApiClient({ baseUrl: `http://127.0.0.1:${port}` });
    const refused = await down.getThread('t1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InboxApiUnreachableError);
    expect((refused as Error).message).toBe(`inbox API unreachable at http://127.0.0.1:${port}`);
    await expect(api().getThread('slow')).rejects.toThrow(`inbox API unreachable at ${stubUrl}/prefix (no answer within 0.5 s)`);
  });

  it('answers ids of `.` or `..` (a URL would step up its path) and ids longer than any, as unknown, calling nothing', async () => {
    const calls = seen.length;
    const client = api();
    for (const call of [
      () => client.getThread('.'),
      () => client.getThread('..'),
      () => client.getThread('t'.repeat(200_000)),
      () => client.getAttachment('.'),
      () => client.replyToMessage('..', { body: 'x' }),
      () => client.forwardMessage('.', { to: ['a@example.com'] }),
      () => client.sendDraft('..'),
      () => client.updateLabels('..', { add_labels: ['x'] }),
    ]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InboxApiError);
      expect(error).toMatchObject({ status: 404, code: 'not_found', message: expect.stringMatching(/^[A-Z][a-z]+ not found$/) });
    }
    expect(seen.length).toBe(calls);
  });

  it("passes the caller's cancellation through as such, not as the API being unreachable", async () => {
    const controller = new AbortController();
    const pending = api().getThread('slow', { signal: controller.signal });
    controller.abort(new Error('client cancelled'));
    await expect(pending).rejects.toThrow('client cancelled');
  });
});

describe("inbox-api's verdict on a caller's key", () => {
  it.each([
    [200, 'accepted'],
    // A key without the permission to read inboxes is still a key inbox-api knows.
    [403, 'accepted'],
    [401, 'rejected'],
    [429, 'unknown'],
    [500, 'unknown'],
    [502, 'unknown'],
  ])('is read from HTTP %i as %s', async (status, verdict) => {
    const api = new InboxApiClient({ baseUrl: `${stubUrl}/verdict/${status}` }).withApiKey('caller-key');
    expect(await askInboxApi(api)).toBe(verdict);
    expect(seen.at(-1)).toMatchObject({
      url: `/verdict/${status}/v1/inboxes?limit=1`,
      headers: { authorization: 'Bearer caller-key' },
    });
  });

  it('is unknown when inbox-api does not answer', async () => {
    const api = new InboxApiClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` }).withApiKey('caller-key');
    expect(await askInboxApi(api)).toBe('unknown');
  });
});

describe('an MCP client while the inbox API is down', () => {
  let client: Client;
  let apiUrl: string;
  beforeAll(async () => {
    apiUrl = `http://127.0.0.1:${await closedPort()}`;
    const server = createMcpServer({
      api: new InboxApiClient({ baseUrl: apiUrl }),
      logger: createLogger({ service: 'inbox-mcp', level: 'silent' }),
      taskKey: TEST_TASK_KEY,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(clientSide);
  });
  afterAll(() => client.close());

  it('gets a tool error result naming the API address, never a stack trace', async () => {
    const result = await client.callTool({ name: 'search_email', arguments: { query: 'invoice', inbox_id: 'i1' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content).toEqual([
      {
        type: 'text',
        text: JSON.stringify({ error: { code: 'api_unreachable', message: `inbox API unreachable at ${apiUrl}`, details: {} } }),
      },
    ]);
  });

  it('gets a JSON-RPC internal error (-32603) when reading a resource', async () => {
    await expect(client.readResource({ uri: 'email://thread/t1' })).rejects.toMatchObject({
      code: -32603,
      message: `MCP error -32603: inbox API unreachable at ${apiUrl}`,
    });
  });
});
