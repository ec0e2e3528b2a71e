import { requirePlatformOperator } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { CallerApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { createTenantBody, tenantList, tenantParams, tenantSchema, updateTenantBody } from './schemas.js';
import { archiveTenant, createTenant, getTenant, listTenants, renameTenant } from './service.js';

const OPERATORS = 'Platform operators only: tokens with the COLLAB_PLATFORM_ADMIN_CLAIM claim (403 otherwise).';
const OPERATORS_AND_ADMINS =
  'Platform operators, and Org admins for their own tenant (403 for other roles, 404 for another tenant).';

export function tenantRoutes(api: CallerApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/tenants',
    summary: 'Create a tenant',
    description: `${OPERATORS} With \`first_admin\`, the tenant starts with one Org admin, not yet linked: the first token carrying that verified \`email\` signs in as them. Without it the tenant has no users (\`cli bootstrap\` creates a tenant with a linked first admin).`,
    tags: ['tenants'],
    authorize: ({ caller }) => requirePlatformOperator(caller),
    body: createTenantBody,
    status: 201,
    response: tenantSchema,
    errors: [403],
    handler: ({ body }) => createTenant(deps.db, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/tenants',
    summary: 'List tenants, oldest first',
    description: OPERATORS,
    tags: ['tenants'],
    authorize: ({ caller }) => requirePlatformOperator(caller),
    query: listQuery,
    response: tenantList,
    errors: [403],
    handler: ({ query }) => listTenants(deps.db, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/tenants/{tenant_id}',
    summary: 'Get a tenant',
    description: OPERATORS_AND_ADMINS,
    tags: ['tenants'],
    params: tenantParams,
    response: tenantSchema,
    errors: [403, 404],
    handler: ({ params, caller }) => getTenant(deps.db, caller, params.tenant_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/tenants/{tenant_id}',
    summary: 'Rename a tenant',
    description: OPERATORS_AND_ADMINS,
    tags: ['tenants'],
    params: tenantParams,
    body: updateTenantBody,
    response: tenantSchema,
    errors: [403, 404],
    handler: ({ params, body, caller }) => renameTenant(deps.db, caller, params.tenant_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/tenants/{tenant_id}',
    summary: 'Delete a tenant (soft)',
    description: `${OPERATORS} The tenant is archived: it disappears from the API, and its users can no longer sign in (401).`,
    tags: ['tenants'],
    authorize: ({ caller }) => requirePlatformOperator(caller),
    params: tenantParams,
    status: 204,
    errors: [403, 404],
    handler: ({ params }) => archiveTenant(deps.db, params.tenant_id),
  });
}
