import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Request, RequestHandler } from 'express';
import { redactUrl } from '@repo/config';
import { requestIdOf } from '@repo/errors';

export type { Logger } from 'pino';

/** JSON lines on stdout, or on stderr where stdout is a protocol channel (MCP over stdio). */
export function createLogger(options: { service: string; level: string; stream?: 'stdout' | 'stderr' }): Logger {
  return pino(
    {
      level: options.level,
      formatters: { level: (label) => ({ level: label }) },
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    },
    pino.destination(options.stream === 'stderr' ? 2 : 1),
  );
}

/** The route pattern a request matched (`/v1/inboxes/:inbox_id`), keeping ids out of labels. */
export function routeOf(req: Request): string {
  const route = req.route as { path: string } | undefined;
  return route ? `${req.baseUrl}${route.path}` : 'unmatched';
}

/** One JSON log line per finished request: id, method, url, route, status, duration. */
export function requestLogger(logger: Logger): RequestHandler {
  return pinoHttp<IncomingMessage, ServerResponse>({
    logger,
    genReqId: (_req, res) => requestIdOf(res as never) ?? 'unknown',
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    // Added to the finished request's line only: pino-http calls customProps when the request
    // starts too (no route matched yet), and would write the key twice.
    customSuccessObject: (req, _res, line: object) => ({ ...line, route: routeOf(req as Request) }),
    customErrorObject: (req, _res, _error, line: object) => ({ ...line, route: routeOf(req as Request) }),
    serializers: {
      req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
