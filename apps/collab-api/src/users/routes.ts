import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { createUserBody, roleBody, updateUserBody, userList, userParams, userSchema } from './schemas.js';
import { archiveUser, changeRole, createUser, getUser, listUsers, updateUser } from './service.js';

const NOT_ABOVE_OWN = 'Nobody may give a role above their own (403).';
const LINKING =
  'The user is linked to an identity the first time a token with this verified e-mail arrives; when several ' +
  'tenants await the same e-mail, that request names the tenant in X-Tenant-Id (409 otherwise).';
const ADMIN_REMAINS = 'A tenant keeps at least one Org admin (409).';

export function userRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/api/v1/users',
    summary: "List the users of the caller's tenant, oldest first",
    tags: ['users'],
    query: listQuery,
    response: userList,
    handler: ({ query, actor }) => listUsers(deps.db, actor, query),
  });
  api.route({
    method: 'post',
    path: '/api/v1/users',
    summary: "Create a user in the caller's tenant",
    description: `Org admins only (403 otherwise), like invite. ${LINKING} E-mails are unique among a tenant's users (409).`,
    tags: ['users'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    body: createUserBody,
    status: 201,
    response: userSchema,
    errors: [403, 409],
    handler: ({ body, actor }) => createUser(deps.db, actor, body),
  });
  // Before /users/{user_id}, which would take `me` for an id.
  api.route({
    method: 'get',
    path: '/api/v1/users/me',
    summary: 'Get the calling user',
    tags: ['users'],
    response: userSchema,
    handler: ({ actor }) => getUser(deps.db, actor, actor.userId),
  });
  api.route({
    method: 'post',
    path: '/api/v1/users/invite',
    summary: "Invite a user to the caller's tenant",
    description: `Org admins only (403 otherwise). ${LINKING} No invitation e-mail is sent: the invitee signs in through the identity provider.`,
    tags: ['users'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    body: createUserBody,
    status: 201,
    response: userSchema,
    errors: [403, 409],
    handler: ({ body, actor }) => createUser(deps.db, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/users/{user_id}',
    summary: 'Get a user',
    tags: ['users'],
    params: userParams,
    response: userSchema,
    errors: [404],
    handler: ({ params, actor }) => getUser(deps.db, actor, params.user_id),
  });
  api.route({
    method: 'put',
    path: '/api/v1/users/{user_id}',
    summary: 'Update a user',
    description:
      'Org admins may update any user of their tenant; other roles only themselves, and without changing their role (403). ' +
      `${NOT_ABOVE_OWN} Org admins cannot change their own role (409). ${ADMIN_REMAINS}`,
    tags: ['users'],
    params: userParams,
    body: updateUserBody,
    response: userSchema,
    errors: [403, 404, 409],
    handler: ({ params, body, actor }) => updateUser(deps.db, actor, params.user_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/users/{user_id}',
    summary: 'Delete a user (soft)',
    description: `Org admins only (403 otherwise). Users cannot delete themselves (409). ${ADMIN_REMAINS} A deleted user can no longer sign in, and their identity is free to accept another invitation.`,
    tags: ['users'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: userParams,
    status: 204,
    errors: [403, 404, 409],
    handler: ({ params, actor }) => archiveUser(deps.db, actor, params.user_id),
  });
  api.route({
    method: 'put',
    path: '/api/v1/users/{user_id}/role',
    summary: "Change a user's role",
    description: `Org admins only (403 otherwise). Org admins cannot change their own role (409). ${ADMIN_REMAINS}`,
    tags: ['users'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: userParams,
    body: roleBody,
    response: userSchema,
    errors: [403, 404, 409],
    handler: ({ params, body, actor }) => changeRole(deps.db, actor, params.user_id, body.role),
  });
}
