import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { UnauthorizedError } from '@repo/errors';
import type { RateLimit } from '@repo/rate-limit';

/**
 * Who a presented API key belongs to (the name its per-key limits count against), or undefined
 * when it is no key of this service.
 */
export type ApiKeyLookup = (presented: string) => Promise<string | undefined> | string | undefined;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The keys of INBOX_API_KEYS. They are compared as digests in constant time, every one of them
 * whether or not an earlier one matched, so neither their content nor their length leaks. A key
 * is named by a digest prefix, never by itself.
 */
export function configuredKeys(keys: string[]): ApiKeyLookup {
  const known = keys.map(digest);
  return (presented) => {
    const candidate = digest(presented);
    const matches = known.filter((key) => timingSafeEqual(key, candidate)).length;
    return matches > 0 ? `key:${candidate.toString('hex').slice(0, 16)}` : undefined;
  };
}

/**
 * With a key lookup (API keys configured), every request needs `Authorization: Bearer <key>` with
 * a key it knows, except those `exempt` names: requests that carry a credential of their own,
 * which their route checks (a signed download link).
 *
 * A right key is always let through. A wrong or missing key counts against the client's address
 * in `failures`: 401 until the address has made too many, then 429 (with Retry-After) until the
 * window ends. The failures of an address never refuse a right key from it, so one client behind
 * a shared address (a proxy without TRUST_PROXY_HOPS) that keeps sending a wrong key locks nobody
 * else out. The limiter only sees outcomes, so it stays as it is whatever `lookup` consults.
 */
export function requireApiKey(
  lookup: ApiKeyLookup | undefined,
  failures: RateLimit,
  options: { exempt?: (req: Request) => boolean } = {},
): RequestHandler {
  if (!lookup) return (_req, _res, next) => next();
  return async (req, res, next) => {
    if (options.exempt?.(req)) return next();
    const presented = bearerToken(req);
    const caller = presented === undefined ? undefined : await lookup(presented);
    if (caller !== undefined) {
      res.locals.caller = caller;
      return next();
    }
    await failures.consume(clientAddress(req));
    throw new UnauthorizedError('Missing or invalid API key: send Authorization: Bearer <key>');
  };
}

/** The token of `Authorization: Bearer <token>` (scheme in any case); undefined for any other shape. */
function bearerToken(req: Request): string | undefined {
  const [scheme, token, ...rest] = (req.get('authorization') ?? '').split(' ');
  return scheme?.toLowerCase() === 'bearer' && token && rest.length === 0 ? token : undefined;
}

/** Who a request counts against: its API key, or its client address when the API is open. */
export function callerOf(req: Request, res: Response): string {
  return typeof res.locals.caller === 'string' ? res.locals.caller : clientAddress(req);
}

function clientAddress(req: Request): string {
  return `ip:${req.ip ?? 'unknown'}`;
}
