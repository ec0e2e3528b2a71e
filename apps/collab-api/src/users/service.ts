import { NotFoundError } from '@repo/errors';
import {
  type Actor,
  liveIn,
  requireRoleChange,
  requireRoleWithinOwn,
  requireUserDeletion,
  requireUserUpdate,
  roleName,
  roleOf,
  type RoleName,
} from '../access/index.js';
import type { Database } from '../database.js';
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
 * A new user of the actor's tenant, not linked to any identity yet: the first token with a
 * verified `email` equal to the user's links it (see signIn).
 */
export async function createUser(db: Database, actor: Actor, input: CreateUserInput): Promise<UserResponse> {
  const role = roleOf(input.role);
  requireRoleWithinOwn(actor, role);
  const user = await conflictOnDuplicate(
    db.user.create({ data: { tenantId: actor.tenantId, email: input.email, liveEmail: input.email, name: input.name, role } }),
    ['tenant_id', 'live_email'],
    emailTaken(input.email),
  );
  return toUserResponse(user);
}

export async function updateUser(db: Database, actor: Actor, userId: string, input: UpdateUserInput): Promise<UserResponse> {
  const target = await findUser(db, actor, userId);
  const role = input.role === undefined ? undefined : roleOf(input.role);
  requireUserUpdate(actor, target, role);
  const user = await conflictOnDuplicate(
    db.user.update({ where: { id: target.id }, data: { email: input.email, liveEmail: input.email, name: input.name, role } }),
    ['tenant_id', 'live_email'],
    emailTaken(input.email),
  );
  return toUserResponse(user);
}

export async function changeRole(db: Database, actor: Actor, userId: string, name: RoleName): Promise<UserResponse> {
  const target = await findUser(db, actor, userId);
  const role = roleOf(name);
  requireRoleChange(actor, target, role);
  return toUserResponse(await db.user.update({ where: { id: target.id }, data: { role } }));
}

/** Archives the user: gone from the API, unable to sign in, and the e-mail free for a new user. */
export async function archiveUser(db: Database, actor: Actor, userId: string): Promise<void> {
  const target = await findUser(db, actor, userId);
  requireUserDeletion(actor, target);
  await db.user.update({ where: { id: target.id }, data: { archivedAt: new Date(), liveEmail: null } });
}

async function findUser(db: Database, actor: Actor, userId: string): Promise<User> {
  const user = await db.user.findFirst({ where: { id: userId, ...liveIn(actor) } });
  if (!user) throw new NotFoundError('User not found');
  return user;
}
