import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import {
  AppError,
  BadRequestError,
  ERROR_STATUS,
  type ErrorCode,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  ValidationError,
} from './errors.js';
import type { ErrorFormat } from './formats.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** The `type` of the error a body parser's verify step raises for a body that is not UTF-8. */
export const INVALID_UTF8 = 'encoding.invalid_utf8';
/**
 * The `type` of the error a body parser's verify step raises for a body of more objects and arrays
 * than its `limit` (a plain Error: body-parser sets `status` on what verify throws).
 */
export const TOO_MANY_CONTAINERS = 'entity.too_many_containers';

// Accept a caller's id only if it is short and harmless to echo and to log.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (the caller's `x-request-id` when acceptable) and echoes it back. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const offered = req.get(REQUEST_ID_HEADER);
    const id = offered && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    res.locals.requestId = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}

export function requestIdOf(res: Response): string | undefined {
  return typeof res.locals.requestId === 'string' ? res.locals.requestId : undefined;
}

/** Answers every request that matched no route. */
export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new NotFoundError(`No route for ${req.method} ${req.path}`);
  };
}

export interface ErrorLogger {
  error(fields: object, message: string): void;
}

/**
 * The last middleware of an app. AppErrors are written in the service's format; errors from
 * Express and its body parsers become the matching 4xx; anything else is logged and answered
 * with a bare 500 that carries only the request id, never a message, stack or SQL.
 */
export function errorHandler(options: { format: ErrorFormat; logger: ErrorLogger }): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const requestId = requestIdOf(res);
    let error = toAppError(err);
    if (!error || error.status >= 500) {
      options.logger.error({ err, requestId, method: req.method, url: req.originalUrl }, 'request failed');
    }
    error ??= new AppError('internal_error', `Internal server error (request id ${requestId ?? 'unknown'})`, {
      details: { request_id: requestId },
    });
    const { status, body } = options.format(error);
    res.status(status).set(error.headers).json(body);
  };
}

/**
 * Prisma's P2028: an interactive transaction could not get a connection within its maxWait, or ran
 * past its timeout. Both mean the database's connections are all busy (a burst beyond the pool):
 * a request that may be tried again shortly, not a fault of the service's code. Recognised by
 * name and code so that this package needs no Prisma.
 */
const TRANSACTION_TIMED_OUT = 'P2028';
const BUSY_RETRY_AFTER_SECONDS = '1';

/**
 * Recognises the errors Express and body-parser raise, and Prisma's transaction that timed out
 * under load (503 with Retry-After); undefined for anything unexpected.
 */
export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (typeof err !== 'object' || err === null) return undefined;
  const { type, status, statusCode, expose, message, limit, name, code } = err as Record<string, unknown>;
  if (name === 'PrismaClientKnownRequestError' && code === TRANSACTION_TIMED_OUT) {
    return new ServiceUnavailableError('The service is busy: its database connections are all in use; try again shortly', {
      cause: err,
      headers: { 'Retry-After': BUSY_RETRY_AFTER_SECONDS },
    });
  }
  switch (type) {
    case INVALID_UTF8:
      return new ValidationError([{ loc: ['body'], msg: 'Request body is not valid UTF-8', type: 'value_error' }]);
    case 'entity.too.large':
      return new PayloadTooLargeError(
        typeof limit === 'number' ? `Request body is larger than the limit of ${limit} bytes` : 'Request body is too large',
        typeof limit === 'number' ? { limit_bytes: limit } : undefined,
      );
    case TOO_MANY_CONTAINERS:
      return new PayloadTooLargeError(`Request body holds more than ${String(limit)} objects and arrays`, {
        max_containers: limit,
      });
    case 'entity.parse.failed':
      return isJsonScalar((err as { body?: unknown }).body)
        ? new ValidationError([{ loc: ['body'], msg: 'Request body must be a JSON object or array', type: 'json_type' }])
        : new ValidationError([{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }]);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError(typeof message === 'string' ? message : 'Unsupported request encoding');
    case 'request.aborted':
      return new BadRequestError('Request was aborted by the client');
  }
  const httpStatus = typeof status === 'number' ? status : statusCode;
  // The router's decoding of a path parameter with a malformed percent-escape (`/users/%ff`).
  if (name === 'URIError' && httpStatus === 400) {
    return new ValidationError([
      { loc: ['path'], msg: 'Must be percent-encoded UTF-8: an escape such as %ff decodes to no character', type: 'value_error' },
    ]);
  }
  if (typeof httpStatus === 'number' && httpStatus >= 400 && httpStatus < 500 && expose !== false) {
    return new AppError(codeForStatus(httpStatus), typeof message === 'string' ? message : 'Bad request');
  }
  return undefined;
}

function codeForStatus(status: number): ErrorCode {
  const match = (Object.entries(ERROR_STATUS) as [ErrorCode, number][]).find(([, s]) => s === status);
  return match ? match[0] : 'bad_request';
}

/** Larger scalars are called invalid JSON without parsing them again (strict parsing refused them unread). */
const SCALAR_CHECKED_UP_TO = 64 * 1024;

/** Whether a body the JSON parser refused is valid JSON after all: a scalar (`null`, `5`), which strict parsing refuses. */
function isJsonScalar(body: unknown): boolean {
  if (typeof body !== 'string' || body.length > SCALAR_CHECKED_UP_TO) return false;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value !== 'object' || value === null;
  } catch {
    return false;
  }
}
