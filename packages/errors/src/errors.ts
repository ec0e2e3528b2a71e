/**
 * Every error code either service can answer with, and the HTTP status it maps to.
 * This is the one list of codes; add new ones here.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  /** Inbox service: the inbox's or organization's kill switch (`sending_enabled` false) is on. */
  sending_disabled: 403,
  /** Inbox service: a recipient is on a block list, or off an allow list. */
  recipient_blocked: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  /** The request line and headers are over what the HTTP server reads (16 KB): a URL too long, mostly. */
  request_header_too_large: 431,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  provider_error: 502,
  upstream_error: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorDetails = Record<string, unknown>;

/** One invalid input, in the shape FastAPI/pydantic clients already parse. */
export interface ValidationIssue {
  /** Where the value came from, then the path inside it, e.g. `["body", "name"]`. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

interface AppErrorOptions {
  details?: ErrorDetails;
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * Base of every error a service raises on purpose. Its message is written for the API
 * client and is sent as is; anything that is not an AppError is answered with a generic 500.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, details?: ErrorDetails) {
    super('bad_request', message, { details });
  }
}

/**
 * Invalid request input. Its status is the wire format's choice: 400 for the inbox
 * service, 422 for the collab service.
 */
export class ValidationError extends AppError {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[], message = summarizeIssues(issues)) {
    super('validation_error', message, { details: { issues } });
    this.issues = issues;
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required') {
    super('unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You are not allowed to do this') {
    super('forbidden', message);
  }
}

/** A send refused by the outbound safety controls (kill switch, allow/block lists). */
export class PolicyRefusal extends AppError {
  constructor(code: 'sending_disabled' | 'recipient_blocked', message: string, details?: ErrorDetails) {
    super(code, message, { details });
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found', details?: ErrorDetails) {
    super('not_found', message, { details });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details?: ErrorDetails) {
    super('conflict', message, { details });
  }
}

/** What was asked for existed once and is no longer kept (an event cursor past the retention period). */
export class GoneError extends AppError {
  constructor(message: string, details?: ErrorDetails) {
    super('gone', message, { details });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string, details?: ErrorDetails) {
    super('payload_too_large', message, { details });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

export class RateLimitedError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super('rate_limited', message, {
      details: { retry_after_seconds: seconds },
      headers: { 'Retry-After': String(seconds) },
    });
  }
}

/** A system we depend on (mail provider, warehouse, agent) failed; its reason is passed on. */
export class UpstreamError extends AppError {
  constructor(
    message: string,
    options: { code?: 'upstream_error' | 'provider_error'; details?: ErrorDetails; cause?: unknown } = {},
  ) {
    super(options.code ?? 'upstream_error', message, options);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super('service_unavailable', message, options);
  }
}

export function summarizeIssues(issues: ValidationIssue[]): string {
  const [first] = issues;
  if (!first) return 'Invalid request';
  const where = first.loc.join('.');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `Invalid request: ${where ? `${where}: ` : ''}${first.msg}${more}`;
}
