import express, { type Express, type Router } from 'express';
import {
  hostHeaderValidation,
  localhostHostValidation,
} from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { NotFoundError } from '@repo/errors';
import { createServiceApp, type Logger, type Metrics } from '@repo/http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { jsonRpcErrorFormat } from './json-rpc-errors.js';
import { InFlightRequests } from './stateless-cancellation.js';

export interface HttpAppDeps {
  transport: 'sse' | 'http';
  createServer: () => McpServer;
  logger: Logger;
  metrics: Metrics;
  /** Accepted Host headers; undefined means localhost names only when `host` is a loopback address. */
  allowedHosts?: string[];
  host: string;
  trustProxyHops: number;
}

// Attachments travel base64-encoded inside tool arguments.
const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

/** GET /health, GET /metrics and the chosen MCP transport's endpoints. */
export function buildHttpApp(deps: HttpAppDeps): Express {
  const routes = express.Router();
  routes.use(['/mcp', '/sse', '/messages'], dnsRebindingProtection(deps));
  routes.use(deps.transport === 'http' ? streamableHttpRoutes(deps) : sseRoutes(deps));
  return createServiceApp({
    service: 'inbox-mcp',
    version: '1',
    logger: deps.logger,
    metrics: deps.metrics,
    errorFormat: jsonRpcErrorFormat,
    routes,
    jsonLimitBytes: MAX_MESSAGE_BYTES,
    trustProxyHops: deps.trustProxyHops,
  });
}

function dnsRebindingProtection(deps: HttpAppDeps) {
  if (deps.allowedHosts) return hostHeaderValidation(deps.allowedHosts);
  if (['127.0.0.1', 'localhost', '::1'].includes(deps.host)) return localhostHostValidation();
  return (_req: express.Request, _res: express.Response, next: express.NextFunction) => next();
}

/**
 * Streamable HTTP in stateless mode: every POST gets a fresh server and transport, so any
 * replica behind a load balancer can answer any request without sticky sessions. There is
 * no standalone server-to-client stream and no session to delete, which the protocol
 * signals with 405 on GET and DELETE. A request ends, cancelled, when its response stream
 * closes or when a `notifications/cancelled` for it reaches this process.
 */
function streamableHttpRoutes(deps: HttpAppDeps): Router {
  const router = express.Router();
  const inFlight = new InFlightRequests();
  router.post('/mcp', async (req, res) => {
    const client = InFlightRequests.clientOf(req);
    inFlight.cancelNamedIn(client, req.body);
    const server = deps.createServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // Closing the server aborts its request handlers and ends the response stream.
    const forget = inFlight.track(client, req.body, () => void server.close());
    res.on('close', () => {
      forget();
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
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
 * The legacy HTTP+SSE transport: a client holds `GET /sse` open and posts its messages to
 * `POST /messages?sessionId=...`. Sessions live in this process, so replicas need sticky sessions.
 */
function sseRoutes(deps: HttpAppDeps): Router {
  const router = express.Router();
  const sessions = new Map<string, SSEServerTransport>();
  router.get('/sse', async (_req, res) => {
    const transport = new SSEServerTransport('/messages', res);
    const server = deps.createServer();
    sessions.set(transport.sessionId, transport);
    res.on('close', () => {
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  });
  router.post('/messages', async (req, res) => {
    const sessionId = typeof req.query.sessionId === 'string' ? req.query.sessionId : '';
    const transport = sessions.get(sessionId);
    if (!transport) throw new NotFoundError('No such SSE session; open GET /sse first');
    await transport.handlePostMessage(req, res, req.body);
  });
  return router;
}
