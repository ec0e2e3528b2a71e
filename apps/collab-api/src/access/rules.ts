/**
 * Who may do what: every authorization rule of the API, as pure functions of the caller and the
 * records concerned. A rule returns nothing when the action is allowed and throws otherwise:
 * 401 for a token that is no user's, 403 for a role that may not, 404 for a record of another
 * tenant (never 403: callers learn nothing about other tenants), 409 for an action that the
 * record's state forbids.
 */
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '@repo/errors';
import { outranks, Role, roleName } from './roles.js';

/** A signed-in user of a tenant, as every rule and every tenant-scoped query sees them. */
export interface Actor {
  userId: string;
  tenantId: string;
  role: Role;
}

/** Whoever made a request: a verified token, and the user it signs in, if any. */
export interface Caller {
  /** The token carries the platform-operator claim (COLLAB_PLATFORM_ADMIN_CLAIM). */
  platformOperator: boolean;
  /** Absent for a platform operator who is no tenant's user. */
  actor?: Actor;
}

/** Every operation but the platform operator's tenant operations needs a user of a tenant. */
export function requireActor(caller: Caller): Actor {
  if (!caller.actor) throw new UnauthorizedError('Unknown user: this operation needs a user of a tenant');
  return caller.actor;
}

export function requireOrgAdmin(actor: Actor): void {
  if (actor.role !== Role.OrgAdmin) throw new ForbiddenError('Only an Org admin may do this');
}

/** Cancelling a query job: the user who ran it, or an Org admin of its tenant (as BigQuery lets a job's creator or an admin). */
export function requireMayCancelQueryJob(actor: Actor, job: { createdById: string | null }): void {
  if (job.createdById !== actor.userId && actor.role !== Role.OrgAdmin) {
    throw new ForbiddenError('Only the user who ran a query job, or an Org admin, may cancel it');
  }
}

/** Creating, listing and deleting tenants. */
export function requirePlatformOperator(caller: Caller): void {
  if (!caller.platformOperator) throw new ForbiddenError('Only a platform operator may do this');
}

/** Getting or renaming a tenant: a platform operator, or an Org admin of that tenant. */
export function requireTenantAdmin(caller: Caller, tenantId: string): void {
  if (caller.platformOperator) return;
  const actor = requireActor(caller);
  if (actor.tenantId !== tenantId) throw new NotFoundError('Tenant not found');
  requireOrgAdmin(actor);
}

/** Nobody may create a user, or give one a role, above their own role. */
export function requireRoleWithinOwn(actor: Actor, role: Role): void {
  if (outranks(role, actor.role)) {
    throw new ForbiddenError(`A ${roleName(actor.role)} cannot give the role ${roleName(role)}, which is above their own`);
  }
}

/** The user a rule is about: already found in the actor's tenant. */
export interface TargetUser {
  id: string;
  role: Role;
}

/**
 * PUT /users/{user_id}: an Org admin may update any user of the tenant; anyone else only
 * themselves, and without changing their role. No one gives a role above their own.
 */
export function requireUserUpdate(actor: Actor, target: TargetUser, role: Role | undefined): void {
  if (actor.role !== Role.OrgAdmin) {
    if (target.id !== actor.userId) throw new ForbiddenError('Only an Org admin may update other users');
    if (role !== undefined && role !== target.role) throw new ForbiddenError('Only an Org admin may change roles');
    return;
  }
  if (role !== undefined) requireRoleChange(actor, target, role);
}

/**
 * An Org admin changing a role: never above their own, and never their own role, so that a
 * tenant cannot lose its last Org admin (another Org admin can demote them).
 */
export function requireRoleChange(actor: Actor, target: TargetUser, role: Role): void {
  requireRoleWithinOwn(actor, role);
  if (target.id === actor.userId && role !== target.role) {
    throw new ConflictError('You cannot change your own role; another Org admin can');
  }
}

/**
 * A tenant keeps at least one live Org admin: a change that makes `target` stop being one (a
 * demotion, a deletion) needs another. `otherOrgAdmins` must be counted under the lock that
 * serialises the tenant's membership changes (users/service.ts), or two admins demoting each
 * other at once would both see the other and leave none.
 */
export function requireOrgAdminRemains(
  target: TargetUser,
  change: { role?: Role; archived?: boolean },
  otherOrgAdmins: number,
): void {
  const stopsBeingAdmin =
    target.role === Role.OrgAdmin && (change.archived === true || (change.role ?? target.role) !== Role.OrgAdmin);
  if (stopsBeingAdmin && otherOrgAdmins === 0) {
    throw new ConflictError('A tenant keeps at least one Org admin: make another user Org admin first');
  }
}

/** Users cannot delete themselves, so a tenant keeps at least the Org admin who deletes. */
export function requireUserDeletion(actor: Actor, target: TargetUser): void {
  if (target.id === actor.userId) throw new ConflictError('You cannot delete yourself; another Org admin can');
}
