import { NotFoundError, UnauthorizedError } from '@repo/errors';
import {
  type Actor,
  liveIn,
  requireOrgAdmin,
  requireOrgAdminRemains,
  Role,
  requireRoleChange,
  requireRoleWithinOwn,
  requireUserDeletion,
  requireUserUpdate,
  roleName,
  roleOf,
  type RoleName,
} from '../access/index.js';
import type { Database, Transaction } from '../database.js';
import type { User } from '../generated/prisma/client.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, oldestFirst, type ListOptions } from '../shared/schemas.js';
import type { CreateUserInput, UpdateUserInput, UserResponse } from './schemas.js';

function toUserResponse(user: User): UserResponse {
  return {
    id: user.id,
    tenant_id: user.tenantId,
    email: user.email,
    name: user.name,
    role: roleName(user.role),
    identity_provider_id: user.identityProviderId,
    created_at: iso(user.createdAt),
  };
}

const emailTaken = (email: string) => `A user with the e-mail ${email} already exists in this tenant`;

export async function listUsers(db: Database, actor: Actor, page: ListOptions): Promise<{ users: UserResponse[] }> {
  const users = await db.user.findMany({ where: liveIn(actor), ...oldestFirst(page) });
  return { users: users.map(toUserResponse) };
}

export async function getUser(db: Database, actor: Actor, userId: string): Promise<UserResponse> {
  return toUserResponse(await findUser(db, actor, userId));
}

/**
 * Changes to a tenant's users run in a transaction that first locks the tenant row, which
 * serialises them per tenant, and re-reads the actor under that lock: a rule checked inside (the
 * actor is still an Org admin; another Org admin remains) then still holds when the change commits.
 */
function changeMembership<T>(db: Database, actor: Actor, change: (tx: Transaction, current: Actor) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM tenants WHERE id = ${actor.tenantId}::uuid FOR UPDATE`;
    const current = await tx.user.findFirst({ where: { id: actor.userId, ...liveIn(actor) }, select: { role: true } });
    if (!current) throw new UnauthorizedError('Unknown user');
    return change(tx, { ...actor, role: current.role });
  });
}

/** Live Org admins of the tenant besides `userId`, counted inside changeMembership. */
function otherOrgAdmins(tx: Transaction, actor: Actor, userId: string): Promise<number> {
  return tx.user.count({ where: { ...liveIn(actor), role: Role.OrgAdmin, id: { not: userId } } });
}

/**
 * A new user of the actor's tenant (Org admins only), not linked to any identity yet: the first
 * token with a verified `email` equal to the user's links it (see signIn).
 */
export function createUser(db: Database, actor: Actor, input: CreateUserInput): Promise<UserResponse> {
  return changeMembership(db, actor, async (tx, current) => {
    requireOrgAdmin(current);
    const role = roleOf(input.role);
    requireRoleWithinOwn(current, role);
    const user = await conflictOnDuplicate(
      tx.user.create({ data: { tenantId: actor.tenantId, email: input.email, liveEmail: input.email, name: input.name, role } }),
      ['tenant_id', 'live_email'],
      emailTaken(input.email),
    );
    return toUserResponse(user);
  });
}

export function updateUser(db: Database, actor: Actor, userId: string, input: UpdateUserInput): Promise<UserResponse> {
  return changeMembership(db, actor, async (tx, current) => {
    const target = await findUser(tx, actor, userId);
    const role = input.role === undefined ? undefined : roleOf(input.role);
    requireUserUpdate(current, target, role);
    requireOrgAdminRemains(target, { role }, await otherOrgAdmins(tx, actor, target.id));
    const user = await conflictOnDuplicate(
      tx.user.update({ where: { id: target.id }, data: { email: input.email, liveEmail: input.email, name: input.name, role } }),
      ['tenant_id', 'live_email'],
      emailTaken(input.email),
    );
    return toUserResponse(user);
  });
}

export function changeRole(db: Database, actor: Actor, userId: string, name: RoleName): Promise<UserResponse> {
  return changeMembership(db, actor, async (tx, current) => {
    requireOrgAdmin(current);
    const target = await findUser(tx, actor, userId);
    const role = roleOf(name);
    requireRoleChange(current, target, role);
    requireOrgAdminRemains(target, { role }, await otherOrgAdmins(tx, actor, target.id));
    return toUserResponse(await tx.user.update({ where: { id: target.id }, data: { role } }));
  });
}

/**
 * Archives the user: gone from the API, unable to sign in, the e-mail free for a new user, and the
 * identity (`sub`) released, so that the person can accept another invitation.
 */
export function archiveUser(db: Database, actor: Actor, userId: string): Promise<void> {
  return changeMembership(db, actor, async (tx, current) => {
    requireOrgAdmin(current);
    const target = await findUser(tx, actor, userId);
    requireUserDeletion(current, target);
    requireOrgAdminRemains(target, { archived: true }, await otherOrgAdmins(tx, actor, target.id));
    await tx.user.update({
      where: { id: target.id },
      data: { archivedAt: new Date(), liveEmail: null, identityProviderId: null },
    });
  });
}

async function findUser(db: Database | Transaction, actor: Actor, userId: string): Promise<User> {
  const user = await db.user.findFirst({ where: { id: userId, ...liveIn(actor) } });
  if (!user) throw new NotFoundError('User not found');
  return user;
}
