import { UnauthorizedError, ValidationError } from '@repo/errors';
import type { Request, Response } from 'express';
import type { Caller } from '../access/index.js';
import type { Database } from '../database.js';
import { signIn } from './sign-in.js';
import type { TokenVerifier } from './tokens.js';

/** Who made a request: 401 unless its token is valid and signs in a user (signIn) or a platform operator. */
export type Authenticate = (req: Request, res: Response) => Promise<Caller>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function authenticateCaller(verifier: TokenVerifier, db: Database): Authenticate {
  return async (req, res) => {
    const claims = await verifier.verifyRequest(req, res);
    const actor = await signIn(db, claims, { requestedTenantId: requestedTenant(req) });
    if (!actor && !claims.platformAdmin) throw new UnauthorizedError('Unknown user');
    return { platformOperator: claims.platformAdmin, actor };
  };
}

/** X-Tenant-Id: the tenant whose invitation a first sign-in accepts, when several invited the e-mail. */
function requestedTenant(req: Request): string | undefined {
  const value = req.get('x-tenant-id');
  if (value === undefined) return undefined;
  if (!UUID.test(value)) {
    throw new ValidationError([{ loc: ['header', 'x-tenant-id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
  }
  return value.toLowerCase();
}
