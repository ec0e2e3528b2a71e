/**
 * Hostile HTTP input that needs no inbox-api (its URL is a closed port, so every key is let
 * through as `unknown`): each is a client error in JSON-RPC's shape, never a 500 or plain text.
 */
import http from 'node:http';
import net from 'node:net';
import { createLogger, createMetrics, type RunningServer, serve } from '@repo/http';
import { closedPort } from '@repo/testing';
import { InboxApiClient } from '../src/api-client.js';
import { buildHttpApp, type HttpAppDeps } from '../src/http-app.js';
import { createMcpServer } from '../src/mcp-server.js';
import { TEST_TASK_KEY } from './support/task-key.js';

const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
let api: InboxApiClient;
beforeAll(async () => {
  api = new InboxApiClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
});

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

/** A POST with exactly these headers (Host included: fetch would not send a malformed one). */
function rawPost(base: string, path: string, headers: Record<string, string>, body: string) {
  const url = new URL(base);
  return new Promise<{ status: number; contentType: string | undefined; text: string }>((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'], text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const KEY = 'Bearer some-key';
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-http', version: '1' } },
});

describe('streamable HTTP behind a load balancer without MCP_ALLOWED_HOSTS (host 0.0.0.0)', () => {
  // README: "a Host header that is no host name ... 400"; a client error, never a failure of the server.
  it('answers a request with a valid key and a Host header that is no host name with a 4xx, not a 500', async () => {
    const server = await start('http', { host: '0.0.0.0' });
    try {
      for (const host of ['example.com:99999', 'exa mple']) {
        const res = await rawPost(
          server.url,
          '/mcp',
          { host, authorization: KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          initialize,
        );
        expect({ host, status: res.status }).toEqual({ host, status: 400 });
      }
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('legacy SSE transport: failures of POST /messages', () => {
  // README: failures of the HTTP endpoints are JSON-RPC error responses, never a stack trace or plain text.
  it('answers an invalid message, a missing Content-Type and a non-JSON Content-Type with JSON-RPC errors', async () => {
    const server = await start('sse');
    const stop = new AbortController();
    try {
      const stream = await fetch(`${server.url}/sse`, { headers: { authorization: KEY }, signal: stop.signal });
      const reader = stream.body!.getReader();
      let events = '';
      while (!events.includes('\n\n')) events += new TextDecoder().decode((await reader.read()).value);
      const endpoint = /data: (.*)/.exec(events)![1]!;
      const cases: [string, Record<string, string>, string][] = [
        ['not a JSON-RPC message', { 'content-type': 'application/json' }, '{"foo":1}'],
        ['no Content-Type', {}, '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
        ['text/plain', { 'content-type': 'text/plain' }, '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
      ];
      for (const [label, headers, body] of cases) {
        const res = await rawPost(server.url, endpoint, { host: new URL(server.url).host, authorization: KEY, ...headers }, body);
        let parsed: unknown;
        try {
          parsed = JSON.parse(res.text);
        } catch {
          parsed = res.text;
        }
        expect({ label, status: res.status, contentType: res.contentType, body: parsed }).toEqual({
          label,
          status: expect.any(Number),
          contentType: expect.stringMatching(/^application\/json/),
          body: { jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) }, id: null },
        });
      }
    } finally {
      stop.abort();
      await server.shutdown('test');
    }
  });
});

describe('JSON-RPC error codes of the streamable HTTP endpoint', () => {
  // JSON-RPC 2.0: -32700 is for "Invalid JSON was received"; valid JSON that is no Request object is -32600.
  it('answers a body of valid JSON that is no request object (null, 5) as an invalid request, not a parse error', async () => {
    const server = await start('http');
    try {
      for (const body of ['null', '5', '"ping"']) {
        const res = await rawPost(
          server.url,
          '/mcp',
          {
            host: new URL(server.url).host,
            authorization: KEY,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body,
        );
        expect({ body, code: JSON.parse(res.text).error.code }).toEqual({ body, code: -32600 });
      }
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('wait_for_reply asked as a task with arguments its schema refuses', () => {
  // README: "Arguments the input schema refuses give the SDK's `Input validation error: ...` result"
  // (MCP 2025-11-25: input validation errors are tool execution errors, `isError: true`, not protocol errors).
  it('answers the same isError result as the plain call, not a JSON-RPC -32602 error', async () => {
    const server = await start('http');
    try {
      const call = async (task: boolean) => {
        const params = { name: 'wait_for_reply', arguments: { thread_id: 42 }, ...(task && { task: {} }) };
        const res = await rawPost(
          server.url,
          '/mcp',
          {
            host: new URL(server.url).host,
            authorization: KEY,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
        );
        return JSON.parse(/data: (.*)/.exec(res.text)![1]!) as { result?: { isError?: boolean }; error?: unknown };
      };
      const plain = await call(false);
      expect(plain.result?.isError).toBe(true);
      const asTask = await call(true);
      expect({ error: asTask.error, isError: asTask.result?.isError }).toEqual({ error: undefined, isError: true });
    } finally {
      await server.shutdown('test');
    }
  });
});

/** One HTTP/1.1 request written as is on a socket (no Content-Length, no Transfer-Encoding: no body at all). */
function rawRequest(base: string, request: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: rest.join('\r\n\r\n') });
    });
    socket.on('error', reject);
  });
}

describe('a POST /mcp without a body (no Content-Length, no Transfer-Encoding)', () => {
  // The route keys its per-request state by the Request object; when express.json leaves req.body
  // undefined the SDK reads the (empty) body itself and hands a clone of the Request to the factory,
  // which then throws "a server was asked for outside a request": a client-triggered 500.
  it('is answered as a client error (400 parse error / invalid request), not 500 Internal server error', async () => {
    const server = await start('http');
    try {
      const res = await rawRequest(
        server.url,
        `POST /mcp HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nAuthorization: ${KEY}\r\n` +
          'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n\r\n',
      );
      expect({ status: res.status, internal: res.body.includes('-32603') }).toEqual({ status: 400, internal: false });
    } finally {
      await server.shutdown('test');
    }
  });
});

describe('a task-augmented tools/call (2025-11-25) of a tool that declares no taskSupport', () => {
  // MCP 2025-11-25, tasks, tool-level negotiation: execution.taskSupport absent means "forbidden", and
  // "Servers SHOULD return a -32601 (Method not found) error if a client attempts to do so". Only
  // wait_for_reply declares taskSupport: optional. Here list_inboxes runs (it calls inbox-api) and a plain
  // CallToolResult answers a requestor that asked for, and waits on, a CreateTaskResult.
  it('is refused with -32601, not run as a plain call', async () => {
    const server = await start('http');
    try {
      const res = await rawPost(
        server.url,
        '/mcp',
        {
          host: new URL(server.url).host,
          authorization: KEY,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'list_inboxes', arguments: {}, task: {} },
        }),
      );
      const answer = JSON.parse(/data: (.*)/.exec(res.text)![1]!) as { result?: unknown; error?: { code: number } };
      expect({ ran: answer.result !== undefined, code: answer.error?.code }).toEqual({ ran: false, code: -32601 });
    } finally {
      await server.shutdown('test');
    }
  });
});
