import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger, createMetrics, type RunningServer, serve } from '@repo/http';
import { closedPort } from '@repo/testing';
import request from 'supertest';
import { InboxApiClient } from '../src/api-client.js';
import { buildHttpApp, type HttpAppDeps } from '../src/http-app.js';
import { createMcpServer } from '../src/mcp-server.js';

const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
// The handshake needs no inbox API: these tests look at the transports alone.
let api: InboxApiClient;
beforeAll(async () => {
  api = new InboxApiClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
});

async function start(transport: 'sse' | 'http', overrides: Partial<HttpAppDeps> = {}): Promise<RunningServer> {
  const app = buildHttpApp({
    transport,
    createServer: () => createMcpServer({ api, logger }),
    logger,
    metrics: createMetrics({ service: 'inbox-mcp', collectDefault: false }),
    host: '127.0.0.1',
    trustProxyHops: 0,
    ...overrides,
  });
  return serve(app, { port: 0, host: '127.0.0.1', logger, shutdownTimeoutMs: 1000 });
}

describe('streamable HTTP transport (--transport http)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await start('http');
  });
  afterAll(() => server.shutdown('test'));

  it('completes the MCP handshake with the SDK client', async () => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    expect(client.getServerVersion()).toEqual({ name: 'inbox-mcp', version: '0.1.0' });
    expect(client.getInstructions()).toMatch(/inboxes/);
    await client.close();
  });

  it('is stateless: any request can reach any replica, so GET and DELETE /mcp answer 405', async () => {
    for (const method of ['get', 'delete'] as const) {
      const res = await request(server.server)[method]('/mcp');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body.error.code).toBe(-32000);
    }
  });

  it('serves /health beside the transport', async () => {
    expect((await request(server.server).get('/health')).body).toEqual({ status: 'ok' });
  });

  it('rejects a foreign Host header when bound to loopback (DNS rebinding protection)', async () => {
    const res = await request(server.server).post('/mcp').set('Host', 'evil.example').send({});
    expect(res.status).toBe(403);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error, not the REST error envelope', async () => {
    const res = await request(server.server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send('{"jsonrpc": "2.0", ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null });
  });
});

describe('a failure inside the streamable HTTP transport', () => {
  it('is answered with JSON-RPC error -32603 carrying the request id, never a stack trace', async () => {
    const server = await start('http', {
      createServer: () => {
        throw new Error('server construction failed at /secret/path.ts:12');
      },
    });
    try {
      const res = await request(server.server)
        .post('/mcp')
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32603, message: `Internal server error (request id ${res.headers['x-request-id']})` },
        id: null,
      });
      expect(res.text).not.toContain('/secret/path.ts');
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('streamable HTTP behind a load balancer', () => {
  it('accepts only the configured Host names', async () => {
    const server = await start('http', { host: '0.0.0.0', allowedHosts: ['mcp.example.com'] });
    try {
      expect((await request(server.server).post('/mcp').set('Host', 'other.example.com').send({})).status).toBe(403);
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lb-test', version: '1' } },
      };
      const res = await request(server.server)
        .post('/mcp')
        .set('Host', 'mcp.example.com')
        .set('Accept', 'application/json, text/event-stream')
        .send(initialize);
      expect(res.status).toBe(200);
      expect(res.text).toContain('"serverInfo":{"name":"inbox-mcp"');
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('legacy SSE transport (--transport sse)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await start('sse');
  });
  afterAll(() => server.shutdown('test'));

  it('completes the MCP handshake over GET /sse and POST /messages', async () => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new SSEClientTransport(new URL(`${server.url}/sse`)));
    expect(client.getServerVersion()?.name).toBe('inbox-mcp');
    await client.close();
  });

  it('answers a message for an unknown session with 404 and a JSON-RPC error', async () => {
    const res = await request(server.server).post('/messages?sessionId=nope').send({ jsonrpc: '2.0', method: 'ping', id: 1 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'No such SSE session; open GET /sse first' },
      id: null,
    });
  });
});
