import { isUniqueViolation } from '@repo/db';
import type { Actor } from '../access/index.js';
import type { TokenClaims } from './tokens.js';
import type { Database } from '../database.js';
import type { Tenant, User } from '../generated/prisma/client.js';
import { oldestFirst } from '../shared/schemas.js';

/**
 * The user a token signs in (contract.md): the user whose identity_provider_id is the token's
 * `sub`; or else, for a token with a verified e-mail, a user created or invited with that e-mail
 * and not linked yet, which is linked to the `sub` now. Undefined when there is none, or when
 * the user or their tenant is archived: archived users and the users of archived tenants cannot
 * sign in, and the `sub` of an archived user links to no other user.
 */
export async function signIn(
  db: Database,
  claims: Pick<TokenClaims, 'sub' | 'email' | 'emailVerified'>,
): Promise<Actor | undefined> {
  const linked = await findBySub(db, claims.sub);
  if (linked) return activeActor(linked);
  if (!claims.email || !claims.emailVerified) return undefined;
  return linkByEmail(db, claims.sub, claims.email.toLowerCase());
}

type UserWithTenant = User & { tenant: Tenant };

function findBySub(db: Database, sub: string): Promise<UserWithTenant | null> {
  return db.user.findUnique({ where: { identityProviderId: sub }, include: { tenant: true } });
}

function activeActor(user: UserWithTenant): Actor | undefined {
  if (user.archivedAt || user.tenant.archivedAt) return undefined;
  return { userId: user.id, tenantId: user.tenantId, role: user.role };
}

/**
 * Links the oldest unlinked live user with this e-mail (several tenants may have invited the same
 * person; the first invitation wins, deterministically) to the `sub`.
 */
async function linkByEmail(db: Database, sub: string, email: string): Promise<Actor | undefined> {
  const invited = await db.user.findFirst({
    where: { email, identityProviderId: null, archivedAt: null, tenant: { archivedAt: null } },
    ...oldestFirst(),
  });
  if (invited && (await link(db, invited.id, sub))) return { userId: invited.id, tenantId: invited.tenantId, role: invited.role };
  // Nothing (left) to link: a concurrent request with the same token may have linked a user to this `sub` meanwhile.
  const linked = await findBySub(db, sub);
  return linked ? activeActor(linked) : undefined;
}

/** Links the user if it is still unlinked and live; false when another request came first. */
async function link(db: Database, userId: string, sub: string): Promise<boolean> {
  try {
    const { count } = await db.user.updateMany({
      where: { id: userId, identityProviderId: null, archivedAt: null },
      data: { identityProviderId: sub },
    });
    return count === 1;
  } catch (error) {
    // The same `sub` was linked to another user first.
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
