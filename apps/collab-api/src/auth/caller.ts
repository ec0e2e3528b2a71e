import { UnauthorizedError } from '@repo/errors';
import type { Request, Response } from 'express';
import type { Caller } from '../access/index.js';
import type { Database } from '../database.js';
import { signIn } from './sign-in.js';
import type { TokenVerifier } from './tokens.js';

/** Who made a request: 401 unless its token is valid and signs in a user (signIn) or a platform operator. */
export type Authenticate = (req: Request, res: Response) => Promise<Caller>;

export function authenticateCaller(verifier: TokenVerifier, db: Database): Authenticate {
  return async (req, res) => {
    const claims = await verifier.verifyRequest(req, res);
    const actor = await signIn(db, claims);
    if (!actor && !claims.platformAdmin) throw new UnauthorizedError('Unknown user');
    return { platformOperator: claims.platformAdmin, actor };
  };
}
