import { Role } from '../generated/prisma/enums.js';

export { Role };

/** The roles as the API names them, least to most powerful. */
export const ROLE_NAMES = ['Dataset user', 'Dataset editor', 'Org admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

const ROLE_OF_NAME: Record<RoleName, Role> = {
  'Dataset user': Role.DatasetUser,
  'Dataset editor': Role.DatasetEditor,
  'Org admin': Role.OrgAdmin,
};

const RANK: Record<Role, number> = { [Role.DatasetUser]: 0, [Role.DatasetEditor]: 1, [Role.OrgAdmin]: 2 };

export function roleOf(name: RoleName): Role {
  return ROLE_OF_NAME[name];
}

export function roleName(role: Role): RoleName {
  return ROLE_NAMES[RANK[role]]!;
}

/** Whether `role` grants more than `other`. */
export function outranks(role: Role, other: Role): boolean {
  return RANK[role] > RANK[other];
}
