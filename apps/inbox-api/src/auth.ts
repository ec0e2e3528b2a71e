import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { UnauthorizedError } from '@repo/errors';
import type { Api } from '@repo/http';
import type { RateLimit, WindowedRateLimit } from '@repo/rate-limit';
import type { KeyDirectory } from './api-keys/directory.js';
import { type Actor, effectiveLimit } from './api-keys/scope.js';
import { looksLikeSecret } from './api-keys/secrets.js';

/** Who an operator key (one of INBOX_API_KEYS) is, as its limits count it; undefined when it is none. */
export type OperatorKeys = (presented: string) => string | undefined;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The keys of INBOX_API_KEYS. They are compared as digests in constant time, every one of them
 * whether or not an earlier one matched, so neither their content nor their length leaks. A key
 * is named by a digest prefix, never by itself.
 */
export function operatorKeys(keys: string[]): OperatorKeys {
  const known = keys.map(digest);
  return (presented) => {
    const candidate = digest(presented);
    const matches = known.filter((key) => timingSafeEqual(key, candidate)).length;
    return matches > 0 ? `key:${candidate.toString('hex').slice(0, 16)}` : undefined;
  };
}

export interface AuthenticationOptions {
  /** Operator keys (INBOX_API_KEYS); unset, the API is open: a request without a key acts as an operator. */
  operators: OperatorKeys | undefined;
  /** The organizations' API keys. */
  keys: KeyDirectory;
  /** Wrong or missing keys per client address. */
  failures: RateLimit;
  /** Requests that carry a credential of their own, which their route checks (a signed download link). */
  exempt: (req: Request) => boolean;
}

/**
 * Finds who is calling (res.locals.actor, read by actorOf) from `Authorization: Bearer <key>`
 * (the scheme in any case): an operator key, an organization's API key (`inbx_…`), or, in open
 * mode, no key at all. In open mode a key of another form is ignored, as before keys existed; an
 * `inbx_` key is always checked, so that a client meaning to be limited to its scope never runs
 * without it.
 *
 * A right key is always let through. A wrong, revoked, malformed or missing key counts against
 * the client's address in `failures`: 401 until the address has made too many, then 429 (with
 * Retry-After) until the window ends. The failures of an address never refuse a right key from
 * it, so one client behind a shared address (a proxy without TRUST_PROXY_HOPS) that keeps
 * sending a wrong key locks nobody else out.
 */
export function authenticate(options: AuthenticationOptions): RequestHandler {
  return async (req, res, next) => {
    res.locals.actor = await actorFor(req, options);
    next();
  };
}

async function actorFor(req: Request, options: AuthenticationOptions): Promise<Actor> {
  if (options.exempt(req)) return { kind: 'link' };
  const presented = bearerToken(req);
  if (presented !== undefined) {
    const operator = options.operators?.(presented);
    if (operator !== undefined) return { kind: 'operator', limitKey: operator };
    if (looksLikeSecret(presented)) {
      const key = await options.keys.find(presented);
      if (key) return key;
    } else if (!options.operators) {
      return { kind: 'operator', limitKey: clientAddress(req) };
    }
  } else if (!options.operators) {
    return { kind: 'operator', limitKey: clientAddress(req) };
  }
  await options.failures.consume(clientAddress(req));
  throw new UnauthorizedError('Missing or invalid API key: send Authorization: Bearer <key>');
}

/** The token of `Authorization: Bearer <token>` (scheme in any case); undefined for any other shape. */
function bearerToken(req: Request): string | undefined {
  const [scheme, token, ...rest] = (req.get('authorization') ?? '').split(' ');
  return scheme?.toLowerCase() === 'bearer' && token && rest.length === 0 ? token : undefined;
}

/** The caller authenticate() found. Only under /v1, where it runs first. */
export function actorOf(res: Response): Actor {
  const actor = res.locals.actor as Actor | undefined;
  if (!actor) throw new Error('No actor: authenticate() must run before the /v1 routes');
  return actor;
}

/**
 * Takes one request from the caller's budget per minute: its key's (rate_limit_per_minute, or
 * `perMinute` when the key sets none), an operator key's, or its client address's (open mode,
 * download links).
 */
export function limitRequests(limit: WindowedRateLimit<'minute'>, perMinute: number): RequestHandler {
  return async (req, res, next) => {
    const actor = actorOf(res);
    if (actor.kind === 'key') {
      await limit.consume(actor.limitKey, { minute: effectiveLimit(actor.limits.rateLimitPerMinute, perMinute) });
    } else {
      await limit.consume(actor.kind === 'operator' ? actor.limitKey : clientAddress(req), { minute: perMinute });
    }
    next();
  };
}

function clientAddress(req: Request): string {
  return `ip:${req.ip ?? 'unknown'}`;
}

/** How /v1 routes are declared: every handler gets the caller as `actor`. */
export type InboxApi = Api<{ actor: Actor }>;
