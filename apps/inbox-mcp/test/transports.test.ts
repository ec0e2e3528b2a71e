import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger, createMetrics, type RunningServer, serve } from '@repo/http';
import { closedPort } from '@repo/testing';
import request from 'supertest';
import { InboxApiClient } from '../src/api-client.js';
import { buildHttpApp, type HttpAppDeps } from '../src/http-app.js';
import { createMcpServer } from '../src/mcp-server.js';
import { TEST_TASK_KEY } from './support/task-key.js';

const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
// The handshake needs no inbox API: these tests look at the transports alone. A key is let through
// when inbox-api cannot be asked about it (auth.test.ts has a real inbox-api judge keys).
let api: InboxApiClient;
beforeAll(async () => {
  api = new InboxApiClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
});
const KEY = 'Bearer some-key';
const withKey = { requestInit: { headers: { Authorization: KEY } } };

async function start(transport: 'sse' | 'http', overrides: Partial<HttpAppDeps> = {}): Promise<RunningServer> {
  const app = buildHttpApp({
    transport,
    createServer: (client, reach) => createMcpServer({ api: client, logger, taskKey: TEST_TASK_KEY }, reach),
    api,
    allowAnonymous: false,
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
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), withKey));
    expect(client.getServerVersion()).toEqual({ name: 'inbox-mcp', version: '0.1.0' });
    expect(client.getInstructions()).toMatch(/inboxes/);
    await client.close();
  });

  it('is stateless: any request can reach any replica, so GET and DELETE /mcp answer 405', async () => {
    for (const method of ['get', 'delete'] as const) {
      const res = await request(server.server)[method]('/mcp').set('Authorization', KEY);
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

  it("refuses a browser's request from another origin (403), and takes its own origin's and agents' (no Origin)", async () => {
    const ping = (origin?: string) => {
      const req = request(server.server)
        .post('/mcp')
        .set('Authorization', KEY)
        .set('Accept', 'application/json, text/event-stream')
        .set('MCP-Protocol-Version', '2025-11-25');
      return (origin ? req.set('Origin', origin) : req).send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    };
    for (const origin of ['http://evil.example', 'https://127.0.0.1.evil.example', 'null', 'not a url']) {
      const res = await ping(origin);
      expect({ origin, status: res.status, body: res.body }).toEqual({
        origin,
        status: 403,
        body: { jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/^Invalid Origin/) }, id: null },
      });
    }
    for (const origin of [undefined, new URL(server.url).origin, 'http://localhost:6274']) {
      expect({ origin, status: (await ping(origin)).status }).toEqual({ origin, status: 200 });
    }
  });

  it('answers a body that is not JSON with a JSON-RPC parse error, not the REST error envelope', async () => {
    const res = await request(server.server)
      .post('/mcp')
      .set('Authorization', KEY)
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send('{"jsonrpc": "2.0", ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null });
  });

  it('answers a request whose id is no string or number (an array 20,000 deep) as invalid, not with a 500', async () => {
    const deepId = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const post = (body: string) =>
      request(server.server)
        .post('/mcp')
        .set('Authorization', KEY)
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream')
        .send(body);
    const invalid = await post(`{"jsonrpc":"2.0","id":${deepId},"method":"tools/list"}`);
    expect({ status: invalid.status, code: invalid.body.error?.code }).toEqual({ status: 400, code: -32600 });
    // A cancellation naming such an id is a notification like any other: accepted, and it cancels nothing.
    expect((await post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${deepId}}}`)).status).toBe(
      202,
    );
  });
});

describe('a failure inside the streamable HTTP transport', () => {
  it('is answered with JSON-RPC error -32603 for that request, never a stack trace', async () => {
    const server = await start('http', {
      createServer: () => {
        throw new Error('server construction failed at /secret/path.ts:12');
      },
    });
    try {
      const res = await request(server.server)
        .post('/mcp')
        .set('Authorization', KEY)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(res.status).toBe(500);
      // SDK v2 answers it itself, to the JSON-RPC request; the X-Request-Id names the logged error.
      expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: 1 });
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
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
        .set('Authorization', KEY)
        .set('Accept', 'application/json, text/event-stream')
        .send(initialize);
      expect(res.status).toBe(200);
      expect(res.text).toContain('"serverInfo":{"name":"inbox-mcp"');
      const withOrigin = (host: string, origin: string) =>
        request(server.server)
          .post('/mcp')
          .set('Host', host)
          .set('Origin', origin)
          .set('Authorization', KEY)
          .set('Accept', 'application/json, text/event-stream')
          .send(initialize);
      expect((await withOrigin('mcp.example.com', 'https://evil.example')).status).toBe(403);
      expect((await withOrigin('mcp.example.com', 'https://mcp.example.com')).status).toBe(200);
    } finally {
      await server.shutdown('test');
    }
  });

  it('without MCP_ALLOWED_HOSTS, takes an Origin of the Host it was asked as only', async () => {
    const server = await start('http', { host: '0.0.0.0' });
    try {
      const post = (origin: string) =>
        request(server.server)
          .post('/mcp')
          .set('Host', 'mcp.internal:8200')
          .set('Origin', origin)
          .set('Authorization', KEY)
          .set('Accept', 'application/json, text/event-stream')
          .set('MCP-Protocol-Version', '2025-11-25')
          .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      expect((await post('https://evil.example')).status).toBe(403);
      expect((await post('https://mcp.internal')).status).toBe(200);
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
    await client.connect(new SSEClientTransport(new URL(`${server.url}/sse`), withKey));
    expect(client.getServerVersion()?.name).toBe('inbox-mcp');
    await client.close();
  });

  it('answers a message for an unknown session with 404 and a JSON-RPC error', async () => {
    const res = await request(server.server)
      .post('/messages?sessionId=nope')
      .set('Authorization', KEY)
      .send({ jsonrpc: '2.0', method: 'ping', id: 1 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'No such SSE session; open GET /sse first' },
      id: null,
    });
  });
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } },
};

describe('bearer authentication of the network transports', () => {
  let server: RunningServer;
  let base: string;
  beforeAll(async () => {
    server = await start('http');
    base = server.url;
  });
  afterAll(() => server.shutdown('test'));

  const post = (headers: Record<string, string> = {}) =>
    request(server.server).post('/mcp').set('Accept', 'application/json, text/event-stream').set(headers).send(initialize);

  it('answers a request without a key with 401 and the challenge naming the protected-resource metadata', async () => {
    const res = await post();
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Authentication required: send Authorization: Bearer <key>, with an API key of inbox-api' },
      id: null,
    });
  });

  it('answers GET and DELETE /mcp without a key with 401 too: every request is authenticated', async () => {
    for (const method of ['get', 'delete'] as const) {
      const res = await request(server.server)[method]('/mcp');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="/);
    }
    // The SSE transport's paths are not this transport's: not found, not a challenge.
    expect((await request(server.server).post('/messages').send({})).status).toBe(404);
  });

  it('treats another scheme as no key (RFC 6750: no error code), and a malformed bearer as invalid_token', async () => {
    for (const other of ['Basic dXNlcjpwYXNz', 'Token some-key', 'Bearer\tkey']) {
      const res = await post({ Authorization: other });
      expect({ other, status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({
        other,
        status: 401,
        challenge: `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`,
      });
    }
    for (const malformed of ['Bearer', 'Bearer ', 'Bearer two words', 'Bearer é-key']) {
      const res = await post({ Authorization: malformed });
      expect({ malformed, status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({
        malformed,
        status: 401,
        challenge:
          `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource", error="invalid_token", ` +
          'error_description="Authorization must be Bearer followed by one key"',
      });
    }
  });

  it('takes the scheme in any case, and lets a key through when inbox-api cannot be asked about it', async () => {
    const res = await post({ Authorization: 'bEaReR some-key' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('"serverInfo":{"name":"inbox-mcp"');
  });

  it('serves the protected-resource metadata at the root and with the endpoint path inserted (RFC 9728)', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await request(server.server).get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({ resource: `${base}/mcp`, bearer_methods_supported: ['header'], resource_name: 'inbox-mcp' });
    }
    expect((await request(server.server).get('/.well-known/oauth-protected-resource/sse')).status).toBe(404);
  });

  it('answers a browser preflight of the metadata, and refuses other methods with 405', async () => {
    const preflight = await request(server.server)
      .options('/.well-known/oauth-protected-resource')
      .set('Origin', 'http://localhost:6274')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'mcp-protocol-version');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const posted = await request(server.server).post('/.well-known/oauth-protected-resource').send({});
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET, OPTIONS');
  });

  it('refuses metadata and challenges for a foreign Host when bound to loopback (DNS rebinding protection)', async () => {
    expect((await request(server.server).get('/.well-known/oauth-protected-resource').set('Host', 'evil.example')).status).toBe(
      403,
    );
  });
});

describe('the resource URL behind a load balancer', () => {
  it('is PUBLIC_BASE_URL when set, path prefix included', async () => {
    const server = await start('http', { publicBaseUrl: 'https://mcp.example.com/inbox' });
    try {
      const res = await request(server.server).post('/mcp').send(initialize);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer resource_metadata="https://mcp.example.com/inbox/.well-known/oauth-protected-resource"',
      );
      expect((await request(server.server).get('/.well-known/oauth-protected-resource')).body.resource).toBe(
        'https://mcp.example.com/inbox/mcp',
      );
    } finally {
      await server.shutdown('test');
    }
  });

  it("otherwise follows the proxy's X-Forwarded-Proto and X-Forwarded-Host within TRUST_PROXY_HOPS", async () => {
    const server = await start('http', { host: '0.0.0.0', trustProxyHops: 1 });
    try {
      const res = await request(server.server)
        .get('/.well-known/oauth-protected-resource')
        .set('X-Forwarded-Proto', 'https')
        .set('X-Forwarded-Host', 'mcp.example.com');
      expect(res.body.resource).toBe('https://mcp.example.com/mcp');
    } finally {
      await server.shutdown('test');
    }
  });

  it('answers a Host header that is no host name with 400, never echoing it into the challenge', async () => {
    const server = await start('http', { host: '0.0.0.0' });
    try {
      for (const host of ['a"b', 'x, resource_metadata=evil', 'exa mple']) {
        const challenge = await request(server.server).post('/mcp').set('Host', host).send(initialize);
        expect({ host, status: challenge.status, body: challenge.body }).toEqual({
          host,
          status: 400,
          body: { jsonrpc: '2.0', error: { code: -32000, message: 'The Host header is not a host name' }, id: null },
        });
        expect(challenge.headers['www-authenticate']).toBeUndefined();
        expect((await request(server.server).get('/.well-known/oauth-protected-resource').set('Host', host)).status).toBe(400);
      }
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('the SSE transport without a key', () => {
  it('refuses GET /sse and POST /messages with 401, and publishes /sse as the resource', async () => {
    const server = await start('sse');
    try {
      const stream = await request(server.server).get('/sse');
      expect(stream.status).toBe(401);
      expect(stream.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource"`,
      );
      expect((await request(server.server).post('/messages?sessionId=x').send({})).status).toBe(401);
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await expect(client.connect(new SSEClientTransport(new URL(`${server.url}/sse`)))).rejects.toMatchObject({ code: 401 });
      for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/sse']) {
        expect((await request(server.server).get(path)).body.resource).toBe(`${server.url}/sse`);
      }
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('--allow-anonymous', () => {
  it('lets a request without a key through, and still refuses another scheme or a malformed bearer', async () => {
    const server = await start('http', { allowAnonymous: true });
    try {
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      expect(client.getServerVersion()?.name).toBe('inbox-mcp');
      await client.close();
      for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer two words']) {
        const res = await request(server.server)
          .post('/mcp')
          .set('Authorization', authorization)
          .set('Accept', 'application/json, text/event-stream')
          .send(initialize);
        expect(res.status).toBe(401);
      }
    } finally {
      await server.shutdown('test');
    }
  });
});
