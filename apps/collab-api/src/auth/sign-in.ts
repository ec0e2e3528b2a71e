import { ConflictError } from '@repo/errors';
import { isUniqueViolation, preparedQuery } from '@repo/db';
import { type Actor, type Role, type RoleName, roleOf } from '../access/index.js';
import { type Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import type { TokenClaims } from './tokens.js';

/** A user created or invited with the token's e-mail and not linked to any identity yet. */
export interface PendingUser {
  userId: string;
  tenantId: string;
}

/**
 * Which pending user a first sign-in links (contract.md, Tokens): the one of the tenant the request
 * names in X-Tenant-Id; else the only one there is; none when there is none (or none in the named
 * tenant). Several, and no tenant named: the caller must choose, and is told so without being told
 * which tenants invited them (another tenant's pending user is nobody else's business). Pure.
 */
export function chooseInvitation(pending: PendingUser[], requestedTenantId: string | undefined): PendingUser | undefined {
  if (requestedTenantId !== undefined) return pending.find((user) => user.tenantId === requestedTenantId);
  if (pending.length <= 1) return pending[0];
  throw new ConflictError(
    'Several organisations have invited this e-mail address: choose one by sending its tenant id in the X-Tenant-Id header',
  );
}

/**
 * The user a token signs in: the user whose identity_provider_id is the token's `sub`; or else,
 * for a token with a verified e-mail, a pending user with that e-mail (chooseInvitation), linked
 * to the `sub` now. Undefined when there is none, or when the user or their tenant is archived.
 * Archiving a user releases its `sub` (users/service.ts), so that person's next sign-in links anew.
 */
export async function signIn(
  db: Database,
  claims: Pick<TokenClaims, 'sub' | 'email' | 'emailVerified'>,
  options: { requestedTenantId?: string } = {},
): Promise<Actor | undefined> {
  const linked = await findBySub(db, claims.sub);
  if (linked) return activeActor(linked);
  if (!claims.email || !claims.emailVerified) return undefined;
  return linkByEmail(db, claims.sub, claims.email.toLowerCase(), options.requestedTenantId);
}

/** What a sign-in reads of a user. */
interface SignedInUser {
  id: string;
  tenantId: string;
  role: Role;
  archivedAt: Date | null;
}

/**
 * The user linked to `sub`, if its tenant is live: one prepared statement, as every request signs in
 * here. A user of an archived tenant keeps its `sub`, so a link by e-mail after this finds nothing
 * either (link: the `sub` is taken) and the sign-in fails as it must.
 */
async function findBySub(db: Database, sub: string): Promise<SignedInUser | undefined> {
  // The role as the database stores it: its API name (Prisma's @map).
  const [row] = await preparedQuery<{ id: string; tenant_id: string; role: RoleName; archived_at: Date | null }>(
    db.pool,
    Prisma.sql`
      SELECT u.id, u.tenant_id, u.role::text AS role, u.archived_at
        FROM users u JOIN tenants t ON t.id = u.tenant_id
       WHERE u.identity_provider_id = ${sub} AND t.archived_at IS NULL`,
  );
  return row && { id: row.id, tenantId: row.tenant_id, role: roleOf(row.role), archivedAt: row.archived_at };
}

function activeActor(user: SignedInUser): Actor | undefined {
  if (user.archivedAt) return undefined;
  return { userId: user.id, tenantId: user.tenantId, role: user.role };
}

async function linkByEmail(
  db: Database,
  sub: string,
  email: string,
  requestedTenantId: string | undefined,
): Promise<Actor | undefined> {
  const pending = await db.user.findMany({
    where: { email, identityProviderId: null, archivedAt: null, tenant: { archivedAt: null } },
    select: { id: true, tenantId: true, role: true },
  });
  const chosen = chooseInvitation(
    pending.map((user) => ({ userId: user.id, tenantId: user.tenantId })),
    requestedTenantId,
  );
  const invited = pending.find((user) => user.id === chosen?.userId);
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
    if (isUniqueViolation(error, ['identity_provider_id'])) return false;
    throw error;
  }
}
