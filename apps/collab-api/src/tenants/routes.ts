import type { Api } from '@repo/http';
import { callerOf, platformOperatorOnly } from '../access/index.js';
import type { Deps } from '../app.js';
import { listQuery } from '../shared/schemas.js';
import { createTenantBody, tenantList, tenantParams, tenantSchema, updateTenantBody } from './schemas.js';
import { archiveTenant, createTenant, getTenant, listTenants, renameTenant } from './service.js';

const OPERATORS = 'Platform operators only: tokens with the COLLAB_PLATFORM_ADMIN_CLAIM claim (403 otherwise).';
const OPERATORS_AND_ADMINS =
  'Platform operators, and Org admins for their own tenant (403 for other roles, 404 for another tenant).';

export function tenantRoutes(api: Api, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/tenants',
    summary: 'Create a tenant',
    description: `${OPERATORS} With \`first_admin\`, the tenant starts with one Org admin, not yet linked: the first token carrying that verified \`email\` signs in as them. Without it the tenant has no users (\`cli bootstrap\` creates a tenant with a linked first admin).`,
    tags: ['tenants'],
    middleware: [platformOperatorOnly],
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
    middleware: [platformOperatorOnly],
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
    handler: ({ params, res }) => getTenant(deps.db, callerOf(res), params.tenant_id),
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
    handler: ({ params, body, res }) => renameTenant(deps.db, callerOf(res), params.tenant_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/tenants/{tenant_id}',
    summary: 'Delete a tenant (soft)',
    description: `${OPERATORS} The tenant is archived: it disappears from the API, and its users can no longer sign in (401).`,
    tags: ['tenants'],
    middleware: [platformOperatorOnly],
    params: tenantParams,
    status: 204,
    errors: [403, 404],
    handler: ({ params }) => archiveTenant(deps.db, params.tenant_id),
  });
}
