import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '@repo/errors';
import {
  type Actor,
  liveIn,
  outranks,
  requireActor,
  requireOrgAdmin,
  requireOrgAdminRemains,
  requirePlatformOperator,
  requireRoleChange,
  requireRoleWithinOwn,
  requireTenantAdmin,
  requireUserDeletion,
  requireUserUpdate,
  Role,
  ROLE_NAMES,
  roleName,
  roleOf,
} from '../src/access/index.js';

const TENANT = 'tenant-a';
const actor = (role: Role, userId = 'me'): Actor => ({ userId, tenantId: TENANT, role });
const admin = actor(Role.OrgAdmin);
const editor = actor(Role.DatasetEditor);
const user = actor(Role.DatasetUser);

describe('roles', () => {
  it('map between the API names and the stored roles, in order of power', () => {
    expect(ROLE_NAMES.map(roleOf).map(roleName)).toEqual(['Dataset user', 'Dataset editor', 'Org admin']);
    expect(outranks(Role.OrgAdmin, Role.DatasetEditor)).toBe(true);
    expect(outranks(Role.DatasetEditor, Role.DatasetUser)).toBe(true);
    expect(outranks(Role.DatasetEditor, Role.DatasetEditor)).toBe(false);
    expect(outranks(Role.DatasetUser, Role.OrgAdmin)).toBe(false);
  });
});

describe('callers', () => {
  it('need a user for everything but the tenant operations of platform operators', () => {
    expect(requireActor({ platformOperator: false, actor: user })).toBe(user);
    expect(() => requireActor({ platformOperator: true })).toThrow(UnauthorizedError);
  });

  it('are Org admins or not, platform operators or not', () => {
    expect(() => requireOrgAdmin(admin)).not.toThrow();
    for (const other of [editor, user]) expect(() => requireOrgAdmin(other)).toThrow(ForbiddenError);
    expect(() => requirePlatformOperator({ platformOperator: true })).not.toThrow();
    expect(() => requirePlatformOperator({ platformOperator: false, actor: admin })).toThrow(ForbiddenError);
  });
});

describe('requireTenantAdmin', () => {
  it('lets platform operators reach any tenant, and Org admins their own', () => {
    expect(() => requireTenantAdmin({ platformOperator: true }, 'any')).not.toThrow();
    expect(() => requireTenantAdmin({ platformOperator: false, actor: admin }, TENANT)).not.toThrow();
  });

  it('answers 404 for another tenant, whatever the role, and 403 for other roles of the tenant', () => {
    for (const someone of [admin, editor, user]) {
      expect(() => requireTenantAdmin({ platformOperator: false, actor: someone }, 'tenant-b')).toThrow(NotFoundError);
    }
    expect(() => requireTenantAdmin({ platformOperator: false, actor: editor }, TENANT)).toThrow(ForbiddenError);
  });
});

describe('user rules', () => {
  const other = (role: Role) => ({ id: 'other', role });
  const self = (who: Actor) => ({ id: who.userId, role: who.role });

  it('give no role above the giver’s own', () => {
    expect(() => requireRoleWithinOwn(user, Role.DatasetUser)).not.toThrow();
    expect(() => requireRoleWithinOwn(user, Role.DatasetEditor)).toThrow(ForbiddenError);
    expect(() => requireRoleWithinOwn(editor, Role.DatasetEditor)).not.toThrow();
    expect(() => requireRoleWithinOwn(editor, Role.OrgAdmin)).toThrow(ForbiddenError);
    expect(() => requireRoleWithinOwn(admin, Role.OrgAdmin)).not.toThrow();
  });

  it('let users other than Org admins update only themselves, keeping their role', () => {
    expect(() => requireUserUpdate(editor, self(editor), undefined)).not.toThrow();
    expect(() => requireUserUpdate(editor, self(editor), Role.DatasetEditor)).not.toThrow();
    expect(() => requireUserUpdate(editor, self(editor), Role.DatasetUser)).toThrow(ForbiddenError);
    expect(() => requireUserUpdate(user, other(Role.DatasetUser), undefined)).toThrow(ForbiddenError);
  });

  it('let Org admins update anyone, but not change their own role', () => {
    expect(() => requireUserUpdate(admin, other(Role.DatasetUser), Role.OrgAdmin)).not.toThrow();
    expect(() => requireUserUpdate(admin, self(admin), Role.OrgAdmin)).not.toThrow();
    expect(() => requireUserUpdate(admin, self(admin), Role.DatasetUser)).toThrow(ConflictError);
    expect(() => requireRoleChange(admin, other(Role.OrgAdmin), Role.DatasetUser)).not.toThrow();
    expect(() => requireRoleChange(admin, self(admin), Role.DatasetEditor)).toThrow(ConflictError);
  });

  it('let nobody delete themselves', () => {
    expect(() => requireUserDeletion(admin, other(Role.OrgAdmin))).not.toThrow();
    expect(() => requireUserDeletion(admin, self(admin))).toThrow(ConflictError);
  });

  it('keep an Org admin: demoting or deleting one needs another', () => {
    const orgAdmin = other(Role.OrgAdmin);
    expect(() => requireOrgAdminRemains(orgAdmin, { role: Role.DatasetUser }, 0)).toThrow(ConflictError);
    expect(() => requireOrgAdminRemains(orgAdmin, { archived: true }, 0)).toThrow(ConflictError);
    expect(() => requireOrgAdminRemains(orgAdmin, { role: Role.DatasetUser }, 1)).not.toThrow();
    expect(() => requireOrgAdminRemains(orgAdmin, { role: Role.OrgAdmin }, 0)).not.toThrow();
    expect(() => requireOrgAdminRemains(orgAdmin, {}, 0)).not.toThrow();
    expect(() => requireOrgAdminRemains(other(Role.DatasetEditor), { archived: true }, 0)).not.toThrow();
  });
});

describe('liveIn', () => {
  it("scopes a query to the actor's tenant and to records not archived", () => {
    expect(liveIn(user)).toEqual({ tenantId: TENANT, archivedAt: null });
  });
});
