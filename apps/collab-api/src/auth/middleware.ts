import { UnauthorizedError } from '@repo/errors';
import type { RequestHandler, Response } from 'express';
import type { TokenClaims, TokenVerifier } from './tokens.js';

/** Who made a request that `authenticate` let through. */
export interface Authenticated<User> {
  claims: TokenClaims;
  user: User;
}

/**
 * Lets a request through only with a valid bearer token whose subject `resolveUser` knows
 * (undefined: an unknown `sub`, answered 401 like any other bad token). Routes behind it read
 * the caller with `authenticated(res)`.
 */
export function authenticate<User>(
  verifier: TokenVerifier,
  resolveUser: (claims: TokenClaims) => Promise<User | undefined>,
): RequestHandler {
  return async (req, res, next) => {
    const claims = await verifier.verifyRequest(req, res);
    const user = await resolveUser(claims);
    if (user === undefined) throw new UnauthorizedError('Unknown user');
    const auth: Authenticated<User> = { claims, user };
    res.locals.auth = auth;
    next();
  };
}

/** The caller of a request that passed `authenticate`; a 401 for a route mounted without it. */
export function authenticated<User>(res: Response): Authenticated<User> {
  const auth = res.locals.auth as Authenticated<User> | undefined;
  if (auth === undefined) throw new UnauthorizedError();
  return auth;
}
