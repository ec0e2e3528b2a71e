import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { UnauthorizedError } from '@repo/errors';
import type { RateLimit } from '@repo/rate-limit';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * With API keys configured, every request needs `Authorization: Bearer <key>` with one of them,
 * except those `exempt` names: requests that carry a credential of their own, which their route
 * checks (a signed download link).
 * Keys are compared as digests in constant time, so neither their content nor their length leaks.
 * Wrong keys count against the client's address in `failures`: once it has made too many, its
 * requests are answered 429 (with Retry-After) until the window ends, right keys included, so
 * that guessing cannot go on. The caller is remembered by a digest prefix of its key, for per-key
 * rate limits.
 */
export function requireApiKey(
  keys: string[] | undefined,
  failures: RateLimit,
  options: { exempt?: (req: Request) => boolean } = {},
): RequestHandler {
  if (!keys) return (_req, _res, next) => next();
  const known = keys.map(digest);
  return async (req, res, next) => {
    if (options.exempt?.(req)) return next();
    const address = clientAddress(req);
    await failures.check(address);
    const [scheme, token, ...rest] = (req.get('authorization') ?? '').split(' ');
    const presented = scheme?.toLowerCase() === 'bearer' && token && rest.length === 0 ? digest(token) : undefined;
    // Every key is compared, whether or not an earlier one matched.
    const matches = presented ? known.filter((key) => timingSafeEqual(key, presented)).length : 0;
    if (matches === 0) {
      await failures.consume(address);
      throw new UnauthorizedError('Missing or invalid API key: send Authorization: Bearer <key>');
    }
    res.locals.caller = `key:${presented!.toString('hex').slice(0, 16)}`;
    next();
  };
}

/** Who a request counts against: its API key, or its client address when the API is open. */
export function callerOf(req: Request, res: Response): string {
  return typeof res.locals.caller === 'string' ? res.locals.caller : clientAddress(req);
}

function clientAddress(req: Request): string {
  return `ip:${req.ip ?? 'unknown'}`;
}
