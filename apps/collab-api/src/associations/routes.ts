import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import { projectParams } from '../projects/schemas.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { projectTenantList, projectTenantParams, sharedDatasetParams } from './schemas.js';
import { listProjectTenants, removeProjectTenant, removeSharedDataset } from './service.js';

export function associationRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/api/v1/projects/{project_id}/tenants',
    summary: 'List the tenants invited to a project, oldest first',
    description:
      "Made by approved project-tenant requests. The project's own tenant sees every invited tenant; an invited tenant sees its own invitation only.",
    tags: ['associations'],
    params: projectParams,
    query: listQuery,
    response: projectTenantList,
    errors: [404],
    handler: ({ params, query, actor }) => listProjectTenants(deps.db, actor, params.project_id, query),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/projects/{project_id}/tenants/{tenant_id}',
    summary: "End a tenant's invitation to a project",
    description:
      "Org admins of the project's tenant or of the invited tenant (403 for other roles). The invited tenant's users lose the project at once, and the datasets that tenant shared into the project leave it.",
    tags: ['associations'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: projectTenantParams,
    status: 204,
    errors: [403, 404],
    handler: ({ params, actor }) => removeProjectTenant(deps.db, actor, params.project_id, params.tenant_id),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/projects/{project_id}/shared-datasets/{dataset_id}',
    summary: 'Take a shared dataset out of a project',
    description:
      "Org admins of the project's tenant or of the dataset's tenant (403 for other roles). The project's queries no longer read the dataset from the next run on.",
    tags: ['associations'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: sharedDatasetParams,
    status: 204,
    errors: [403, 404],
    handler: ({ params, actor }) => removeSharedDataset(deps.db, actor, params.project_id, params.dataset_id),
  });
}
