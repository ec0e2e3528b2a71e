import type { RequestHandler, Response } from 'express';
import { authenticate, authenticated, type TokenVerifier } from '../auth/index.js';
import type { Database } from '../database.js';
import { signIn } from '../users/sign-in.js';
import { type Actor, type Caller, requireActor, requireOrgAdmin, requirePlatformOperator } from './rules.js';

/** What `authenticate` keeps for a request: the user the token signs in, if any. */
interface Account {
  actor?: Actor;
}

/**
 * Lets a request through with a valid token of a user (see signIn), or of a platform operator
 * who is no user; anything else is 401. Routes read the caller with callerOf or actorOf.
 */
export function authenticateCaller(verifier: TokenVerifier, db: Database): RequestHandler {
  return authenticate<Account>(verifier, async (claims) => {
    const actor = await signIn(db, claims);
    if (actor) return { actor };
    return claims.platformAdmin ? {} : undefined;
  });
}

/** The caller of a request that passed authenticateCaller. */
export function callerOf(res: Response): Caller {
  const { claims, user } = authenticated<Account>(res);
  return { platformOperator: claims.platformAdmin, actor: user.actor };
}

/** The signed-in user of a request; 401 for a platform operator who is no user. */
export function actorOf(res: Response): Actor {
  return requireActor(callerOf(res));
}

/** Route middleware for the Org-admin-only operations: 403 for other roles, before input is read. */
export const orgAdminOnly: RequestHandler = (_req, res, next) => {
  requireOrgAdmin(actorOf(res));
  next();
};

/** Route middleware for creating, listing and deleting tenants. */
export const platformOperatorOnly: RequestHandler = (_req, res, next) => {
  requirePlatformOperator(callerOf(res));
  next();
};
