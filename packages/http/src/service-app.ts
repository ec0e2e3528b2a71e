import { z } from 'zod';
import express, { type Express, type Router } from 'express';
import helmet from 'helmet';
import { errorHandler, type ErrorFormat, notFoundHandler, requestId, ServiceUnavailableError } from '@repo/errors';
import { requestLogger, type Logger } from './logger.js';
import { type Metrics, metricsMiddleware } from './metrics.js';
import { docsRouter, openApiDocument, type OpenAPIRegistry } from './openapi.js';
import { checkJsonBody } from './well-formed.js';

export interface ServiceAppOptions {
  service: string;
  version: string;
  description?: string;
  logger: Logger;
  metrics: Metrics;
  errorFormat: ErrorFormat;
  /** Resolves when the service can take traffic (its database answers); throws otherwise. */
  checkReadiness?: () => Promise<void>;
  /** OpenAPI registry the app's routes were described in; served at /openapi.json and /docs. */
  openapi?: OpenAPIRegistry;
  /**
   * Run before any body is read (authentication): a request they refuse never has its body parsed,
   * so that no one without a key can make the process parse (and hold) a body of the largest size.
   */
  beforeBody?: Router;
  /** The app's own routes. */
  routes: Router;
  /**
   * Routes that read their request body themselves, as bytes (webhooks whose signature covers the
   * raw body): mounted before the JSON parser, which would consume it.
   */
  rawBodyRoutes?: Router;
  /** Largest JSON body accepted, in bytes. */
  jsonLimitBytes?: number;
  /**
   * The paths (and those under them) whose JSON bodies are parsed; every path when absent. A request
   * to any other path is answered (404) without its body being read.
   */
  jsonBodyPaths?: string[];
  /** Proxies in front of the service whose X-Forwarded-For is trusted. */
  trustProxyHops?: number;
}

/** Set on `app.locals` while the process shuts down: /ready fails and connections are not kept alive. */
export const DRAINING = 'draining';

function registerProbeDocs(registry: OpenAPIRegistry): void {
  const status = z.object({ status: z.string() });
  registry.registerPath({
    method: 'get',
    path: '/health',
    summary: 'Liveness probe',
    tags: ['operations'],
    responses: { 200: { description: 'The process is alive', content: { 'application/json': { schema: status } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/ready',
    summary: 'Readiness probe: the database answers and the process is not shutting down',
    tags: ['operations'],
    responses: {
      200: { description: 'Ready for traffic', content: { 'application/json': { schema: status } } },
      503: { description: 'Not ready' },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    responses: {
      200: { description: 'Metrics in the Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
    },
  });
}

/**
 * The Express app every API shares: request ids, one log line per request, metrics, security
 * headers, probes, OpenAPI docs, what must run before bodies are read, JSON bodies, then the app's
 * routes, then 404 and errors in the service's wire format.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag computed over every answer: a SHA-1 of the whole body on the event loop (95 ms for a message
  // of 20 MB), for conditional requests no client of these APIs makes. Downloads set their own (the content's hash).
  app.disable('etag');
  app.set('trust proxy', options.trustProxyHops ?? 0);
  app.locals[DRAINING] = false;

  app.use(requestId());
  app.use(requestLogger(options.logger));
  app.use(metricsMiddleware(options.metrics));
  app.use(helmet());
  app.use((_req, res, next) => {
    if (app.locals[DRAINING]) res.setHeader('Connection', 'close');
    next();
  });

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/ready', async (_req, res) => {
    if (app.locals[DRAINING]) throw new ServiceUnavailableError('Shutting down');
    try {
      await options.checkReadiness?.();
    } catch (error) {
      options.logger.warn({ err: error }, 'readiness check failed');
      throw new ServiceUnavailableError('Database is not reachable');
    }
    res.json({ status: 'ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });
  const { openapi } = options;
  if (openapi) {
    registerProbeDocs(openapi);
    app.use(
      docsRouter(() =>
        openApiDocument(openapi, { title: options.service, version: options.version, description: options.description }),
      ),
    );
  }

  if (options.beforeBody) app.use(options.beforeBody);
  if (options.rawBodyRoutes) app.use(options.rawBodyRoutes);
  const jsonLimit = options.jsonLimitBytes ?? 1024 * 1024;
  const parseJson = [declaredOverLimit(jsonLimit), express.json({ limit: jsonLimit, verify: checkJsonBody })];
  if (options.jsonBodyPaths) app.use(options.jsonBodyPaths, parseJson);
  else app.use(parseJson);
  app.use(options.routes);
  app.use(notFoundHandler());
  app.use(errorHandler({ format: options.errorFormat, logger: options.logger }));
  return app;
}

/**
 * A JSON body whose declared length is over the limit, refused (413) before any of it is read.
 * body-parser refuses it too, but answers only once the whole body has come: a client that
 * declares more than it sends would hold the connection until the server's request timeout.
 * The connection is closed after the answer, its body unread. The error is body-parser's own, so
 * that it is answered as every body over the limit is.
 */
function declaredOverLimit(limit: number): express.RequestHandler {
  return (req, res, next) => {
    if (Number(req.headers['content-length']) > limit && req.is('application/json')) {
      res.set('Connection', 'close');
      return next(Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413, limit }));
    }
    next();
  };
}
