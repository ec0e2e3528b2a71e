import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import express, { type Express, type Router } from 'express';
import {
  hostHeaderValidation,
  localhostHostValidation,
} from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
// SDK v2 has no server transport for the legacy HTTP+SSE protocol: SSE keeps v1's, under a v2 server.
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, localhostAllowedOrigins, type McpServer, validateOriginHeader } from '@modelcontextprotocol/server';
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  requestIdOf,
  UnsupportedMediaTypeError,
  ValidationError,
} from '@repo/errors';
import { createServiceApp, type Logger, type Metrics } from '@repo/http';
import type { InboxApiClient } from './api-client.js';
import { askInboxApi, KeyChecks } from './auth/key-checks.js';
import { authenticate, type Caller, callerOf, protectedResourceMetadataRoute, sameCaller } from './auth/middleware.js';
import { isLoopback } from './config.js';
import { jsonRpcErrorFormat } from './json-rpc-errors.js';
import { reachOf, type ServerReach } from './mcp-server.js';
import { InFlightRequests } from './stateless-cancellation.js';
import { asksForTask, type RawCallParams } from './tasks/task-protocol.js';

export interface HttpAppDeps {
  transport: 'sse' | 'http';
  /**
   * An MCP server whose tools and resources reach inbox-api through `api`: the caller's. Serving
   * one request (stateless HTTP), it need hold only what the request can `reach`.
   */
  createServer: (api: InboxApiClient, reach?: ServerReach) => McpServer;
  /** inbox-api with SERVICE_API_KEY; each caller's client is made from it with their key. */
  api: InboxApiClient;
  /** --allow-anonymous: requests without a key act with SERVICE_API_KEY instead of getting 401. */
  allowAnonymous: boolean;
  /** PUBLIC_BASE_URL; undefined: taken from each request. */
  publicBaseUrl?: string;
  logger: Logger;
  metrics: Metrics;
  /** Accepted Host headers; undefined means localhost names only when `host` is a loopback address. */
  allowedHosts?: string[];
  host: string;
  trustProxyHops: number;
}

// Attachments travel base64-encoded inside tool arguments.
const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

// How long inbox-api's verdict on a key is reused (see KeyChecks), and for how many keys at most.
const KEY_CHECK_TTL_MS = 5_000;
const KEY_CHECK_MAX_ENTRIES = 10_000;

/**
 * GET /health, GET /metrics, the chosen MCP transport's endpoints behind bearer authentication,
 * and the protected-resource metadata (RFC 9728) that names them.
 */
export function buildHttpApp(deps: HttpAppDeps): Express {
  // Hosts and keys are checked before the body is read: a request without a key never has its
  // body (up to 50 MB) parsed.
  const beforeBody = express.Router();
  const endpoint = deps.transport === 'http' ? '/mcp' : '/sse';
  beforeBody.use(['/mcp', '/sse', '/messages', '/.well-known'], dnsRebindingProtection(deps));
  // At the root (what the 401 challenge names), and with the endpoint's path inserted (RFC 9728, section 3.1).
  const metadata = protectedResourceMetadataRoute({ publicBaseUrl: deps.publicBaseUrl, endpoint });
  beforeBody.use(`/.well-known/oauth-protected-resource${endpoint}`, metadata);
  beforeBody.use('/.well-known/oauth-protected-resource', metadata);
  const keyChecks = new KeyChecks({
    ask: (key) => askInboxApi(deps.api.withApiKey(key)),
    ttlMs: KEY_CHECK_TTL_MS,
    maxEntries: KEY_CHECK_MAX_ENTRIES,
  });
  beforeBody.use(
    deps.transport === 'http' ? ['/mcp'] : ['/sse', '/messages'],
    authenticate({ api: deps.api, keyChecks, allowAnonymous: deps.allowAnonymous, publicBaseUrl: deps.publicBaseUrl, endpoint }),
  );
  const routes = deps.transport === 'http' ? streamableHttpRoutes(deps) : sseRoutes(deps);
  return createServiceApp({
    service: 'inbox-mcp',
    version: '1',
    logger: deps.logger,
    metrics: deps.metrics,
    errorFormat: jsonRpcErrorFormat,
    beforeBody,
    routes,
    jsonLimitBytes: MAX_MESSAGE_BYTES,
    jsonBodyPaths: deps.transport === 'http' ? ['/mcp'] : ['/messages'],
    trustProxyHops: deps.trustProxyHops,
  });
}

function dnsRebindingProtection(deps: HttpAppDeps): express.RequestHandler[] {
  const origin = originValidation(deps);
  if (deps.allowedHosts) return [hostHeaderValidation(deps.allowedHosts), origin];
  if (isLoopback(deps.host)) return [localhostHostValidation(), origin];
  return [origin];
}

/**
 * The transport specification's Origin check: a request that carries an Origin (a browser's) is
 * refused with 403 unless it names a host this server answers as: MCP_ALLOWED_HOSTS, localhost
 * names on loopback, or otherwise the request's own Host (same origin). Agents send no Origin.
 */
function originValidation(deps: HttpAppDeps): express.RequestHandler {
  return (req, _res, next) => {
    const allowed =
      deps.allowedHosts ??
      (isLoopback(deps.host) ? localhostAllowedOrigins() : [URL.parse(`http://${req.get('host') ?? ''}`)?.hostname ?? '']);
    const verdict = validateOriginHeader(req.get('origin'), allowed);
    if (!verdict.ok) throw new ForbiddenError(verdict.message);
    next();
  };
}

/**
 * Streamable HTTP in stateless mode, both protocol eras on one endpoint (SDK v2's
 * createMcpHandler): a 2026-07-28 request is answered on its own, a 2025-era one by the stateless
 * fallback. Every POST gets a fresh server acting with that request's own key, so any replica
 * behind a load balancer can answer any request without sticky sessions, and no request can reach
 * state another key left behind. There is no standalone server-to-client stream and no session
 * to delete, which the protocol signals with 405 on GET and DELETE. A request ends, cancelled,
 * when its response stream closes or when a `notifications/cancelled` for it reaches this process
 * (from the same address and key).
 */
function streamableHttpRoutes(deps: HttpAppDeps): Router {
  const router = express.Router();
  const inFlight = new InFlightRequests();
  // What the factory needs of the request it builds a server for: the caller's API, what the request
  // can reach and a hook for cancellation.
  const perRequest = new WeakMap<
    Request,
    { api: InboxApiClient; reach: ServerReach; requestId: unknown; created: (server: McpServer) => void }
  >();
  const serverFor: Parameters<typeof createMcpHandler>[0] = (context) => {
    const request = context.requestInfo && perRequest.get(context.requestInfo);
    if (!request) throw new Error('inbox-mcp: a server was asked for outside a request');
    try {
      const server = deps.createServer(request.api, request.reach);
      request.created(server);
      return server;
    } catch (error) {
      deps.logger.error({ err: error, requestId: request.requestId }, 'mcp server not created');
      throw error;
    }
  };
  const options = {
    legacy: 'stateless',
    maxRequestBodySize: MAX_MESSAGE_BYTES,
    onerror: (error: Error) => deps.logger.debug({ err: error }, 'mcp request rejected or failed'),
  } as const;
  const handler = createMcpHandler(serverFor, options);
  // A 2026-07-28 answer is held as one JSON body until its result unless it streams: a wait
  // (up to 900 s, past fetch's 300 s for headers) streams from the start, so its headers go at once.
  const streaming = createMcpHandler(serverFor, { ...options, responseMode: 'sse' });
  router.post('/mcp', async (req, res) => {
    const url = requestUrl(req);
    // No body at all (no Content-Length, no Transfer-Encoding): nothing was parsed, and the SDK would read it again.
    if (req.body === undefined) throw emptyBody();
    const client = InFlightRequests.clientOf(req);
    inFlight.cancelNamedIn(client, req.body);
    const disconnected = new AbortController();
    const servers = new Set<McpServer>();
    // Closing the server aborts its request handlers and ends the response stream.
    const forget = inFlight.track(client, req.body, () => {
      for (const server of servers) void server.close();
    });
    res.on('close', () => {
      forget();
      disconnected.abort();
    });
    const request = new Request(url, {
      method: 'POST',
      headers: webHeaders(req),
      signal: disconnected.signal,
    });
    perRequest.set(request, {
      api: callerOf(res).api,
      reach: reachOf(req.body),
      requestId: requestIdOf(res),
      created: (server) => servers.add(server),
    });
    const response = await (isWait(req.body) ? streaming : handler).fetch(request, { parsedBody: req.body });
    await sendWebResponse(response, res);
  });
  const notAllowed: express.RequestHandler = (_req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this server is stateless; use POST' },
        id: null,
      });
  };
  router.get('/mcp', notAllowed);
  router.delete('/mcp', notAllowed);
  return router;
}

/**
 * Whether a body is a call of wait_for_reply that waits in the request, the one call that may take
 * minutes. One asking for a task answers at once, as one JSON body like any other call.
 */
function isWait(body: unknown): boolean {
  const message = body as { method?: unknown; params?: RawCallParams } | null;
  return message?.method === 'tools/call' && message.params?.name === 'wait_for_reply' && !asksForTask(message.params);
}

/** The request's URL; 400 for a Host header that makes none (`example.com:99999`, `exa mple`). */
function requestUrl(req: express.Request): URL {
  const url = URL.parse(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  if (!url) throw new BadRequestError('The Host header is not a host name');
  return url;
}

function emptyBody(): ValidationError {
  return new ValidationError([
    { loc: ['body'], msg: 'Request body is empty: expected a JSON-RPC message', type: 'json_invalid' },
  ]);
}

/** An Express request's headers as Fetch API headers. */
function webHeaders(req: express.Request): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** How long a streamed answer may take to begin before its headers are sent without it. */
const HEADERS_ALONE_AFTER_MS = 100;

/** A Fetch API response written to Express's, streaming its body (SSE) as it comes. */
async function sendWebResponse(response: Response, res: express.Response): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => res.append(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  // The headers go out with the first chunk, in one write; an answer slow to begin (a wait) has
  // them sent alone after a moment, so that its client sees the stream open.
  const headersAlone = setTimeout(() => res.flushHeaders(), HEADERS_ALONE_AFTER_MS);
  const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
  res.on('close', () => {
    clearTimeout(headersAlone);
    body.destroy();
  });
  for await (const chunk of body) {
    clearTimeout(headersAlone);
    res.write(chunk);
  }
  clearTimeout(headersAlone);
  res.end();
}

/**
 * The legacy HTTP+SSE transport: a client holds `GET /sse` open and posts its messages to
 * `POST /messages?sessionId=...`. Sessions live in this process, so replicas need sticky sessions.
 * A session acts with the key that opened it, and takes messages only from that key: each POST
 * is authenticated on its own, and another caller, even with a valid key of theirs, gets 403.
 */
function sseRoutes(deps: HttpAppDeps): Router {
  const router = express.Router();
  const sessions = new Map<string, { transport: SSEServerTransport; owner: Caller }>();
  router.get('/sse', async (_req, res) => {
    const owner = callerOf(res);
    const transport = new SSEServerTransport('/messages', res);
    const server = deps.createServer(owner.api);
    sessions.set(transport.sessionId, { transport, owner });
    res.on('close', () => {
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  });
  router.post('/messages', async (req, res) => {
    const sessionId = typeof req.query.sessionId === 'string' ? req.query.sessionId : '';
    const session = sessions.get(sessionId);
    if (!session) throw new NotFoundError('No such SSE session; open GET /sse first');
    if (!sameCaller(session.owner, callerOf(res))) {
      throw new ForbiddenError('This SSE session was opened with another key; open your own with GET /sse');
    }
    // What the SDK's transport would answer in plain text, answered here as JSON-RPC errors.
    requestUrl(req);
    if (!req.is('application/json')) throw new UnsupportedMediaTypeError('Expected Content-Type: application/json');
    if (req.body === undefined) throw emptyBody();
    if (!JSONRPCMessageSchema.safeParse(req.body).success) {
      throw new BadRequestError('Invalid message: the body is not a JSON-RPC request, notification or response');
    }
    await session.transport.handlePostMessage(req, res, req.body);
  });
  return router;
}
