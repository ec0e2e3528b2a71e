import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { accessLogPage, accessLogParams, accessLogQuery } from './schemas.js';
import { accessLog } from './service.js';

export function accessLogRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/api/v1/datasets/{dataset_id}/access-log',
    summary: "Other tenants' query jobs over a dataset of the caller's tenant, newest first (Org admin)",
    description:
      'Every job another tenant ran that read one of its tables, refused ones included: the tenant, the user, the query text, status, ' +
      'rows returned and suppressed, bytes processed, when, the analysis rules it applied (those in force when it started) and the ' +
      'exports made of it. 403 for other roles; 404 for a dataset of another tenant (the tenants it is shared with included). Read only.',
    tags: ['datasets'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: accessLogParams,
    query: accessLogQuery,
    response: accessLogPage,
    errors: [403, 404],
    handler: ({ params, query, actor }) => accessLog(deps.db, actor, params.dataset_id, query),
  });
}
