import { requireOrgAdmin, requirePlatformOperator } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { CallerApi, UserApi } from '../shared/api.js';
import { costHistoryPage, costHistoryQuery, quotaSchema, quotaSummarySchema, setQuotaBody } from './schemas.js';
import { costHistory, quotaSummary, setQuota } from './service.js';

export function quotaRoutes(apis: { users: UserApi; callers: CallerApi }, deps: Deps): void {
  apis.users.route({
    method: 'get',
    path: '/api/v1/quota/summary',
    summary: "The caller's tenant's query cost quota and usage (Org admin)",
    description: 'Usage counts the current UTC day and month. 403 for other roles.',
    tags: ['quota'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    response: quotaSummarySchema,
    errors: [403],
    handler: ({ actor }) => quotaSummary(deps.db, deps.config, actor),
  });
  apis.users.route({
    method: 'get',
    path: '/api/v1/quota/cost-history',
    summary: "The costs of the caller's tenant's query jobs, newest first (Org admin)",
    tags: ['quota'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    query: costHistoryQuery,
    response: costHistoryPage,
    errors: [403],
    handler: ({ actor, query }) => costHistory(deps.db, actor, query),
  });
  apis.callers.route({
    method: 'put',
    path: '/api/v1/quota',
    summary: "Set a tenant's daily and monthly query cost quotas (platform operator)",
    description: 'A run is refused with 429 once the usage reaches a quota; lowering a quota below the usage stops runs at once.',
    tags: ['quota'],
    authorize: ({ caller }) => requirePlatformOperator(caller),
    body: setQuotaBody,
    response: quotaSchema,
    errors: [403, 404],
    handler: ({ body }) => setQuota(deps.db, deps.config, body),
  });
}
