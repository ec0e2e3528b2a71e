export { outranks, Role, ROLE_NAMES, roleName, roleOf, type RoleName } from './roles.js';
export {
  type Actor,
  type Caller,
  requireActor,
  requireMayCancelQueryJob,
  requireOrgAdmin,
  requireOrgAdminRemains,
  requirePlatformOperator,
  requireRoleChange,
  requireRoleWithinOwn,
  requireTenantAdmin,
  requireUserDeletion,
  requireUserUpdate,
  type TargetUser,
} from './rules.js';
export { liveIn } from './scope.js';
