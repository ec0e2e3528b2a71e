import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { UnauthorizedError } from '@repo/errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * With API keys configured, every request needs `Authorization: Bearer <key>` with one of them.
 * Keys are compared as digests in constant time, so neither their content nor their length leaks.
 * The caller is remembered by a digest prefix of its key, for per-key rate limits.
 */
export function requireApiKey(keys: string[] | undefined): RequestHandler {
  if (!keys) return (_req, _res, next) => next();
  const known = keys.map(digest);
  return (req, res, next) => {
    const [scheme, token, ...rest] = (req.get('authorization') ?? '').split(' ');
    const presented = scheme?.toLowerCase() === 'bearer' && token && rest.length === 0 ? digest(token) : undefined;
    // Every key is compared, whether or not an earlier one matched.
    const matches = presented ? known.filter((key) => timingSafeEqual(key, presented)).length : 0;
    if (matches === 0) throw new UnauthorizedError('Missing or invalid API key: send Authorization: Bearer <key>');
    res.locals.caller = `key:${presented!.toString('hex').slice(0, 16)}`;
    next();
  };
}

/** Who a request counts against: its API key, or its client address when the API is open. */
export function callerOf(req: Request, res: Response): string {
  return typeof res.locals.caller === 'string' ? res.locals.caller : `ip:${req.ip ?? 'unknown'}`;
}
