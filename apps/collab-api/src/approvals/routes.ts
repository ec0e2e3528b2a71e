import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { InternalApi, UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import {
  approvalDetails,
  approvalDetailsParams,
  approvalParams,
  emptyObject,
  expireQuery,
  myApprovals,
  pendingApprovals,
  projectDatasetApprovalSchema,
  projectDatasetRequestBody,
  projectTenantApprovalSchema,
  projectTenantRequestBody,
  rejectBody,
} from './schemas.js';
import {
  approve,
  expireByOperator,
  getApprovalDetails,
  listMine,
  listPending,
  reject,
  requestProjectDataset,
  requestProjectTenant,
} from './service.js';

const LIFETIME = 'A request expires 15 days after it is made, unless approved or rejected before.';
const DECISION =
  'Org admins of the tenant the request is addressed to (403 for other roles and for the requesting tenant; 404 for other tenants). A request that is no longer pending, or whose 15 days are over, answers 409 saying so. The requester is e-mailed.';

export function approvalRoutes(api: UserApi, internal: InternalApi, deps: Deps): void {
  // The literal paths first: `pending` and `expire` are no approval ids.
  api.route({
    method: 'post',
    path: '/api/v1/approval/project-tenant',
    summary: 'Ask a tenant to join a project',
    description: `Any role, for a project of the caller's tenant (403 for a project it was only invited to). Every Org admin of the invited tenant is e-mailed. 409 when a request for the same association is pending, when the tenant is already associated, or when it is the project's own tenant. ${LIFETIME}`,
    tags: ['approvals'],
    body: projectTenantRequestBody,
    status: 201,
    response: projectTenantApprovalSchema,
    errors: [403, 404, 409],
    handler: ({ body, actor }) => requestProjectTenant(deps, actor, body),
  });
  api.route({
    method: 'post',
    path: '/api/v1/approval/project-dataset',
    summary: "Ask for another tenant's dataset in a project",
    description: `Any role, for a project the caller's tenant owns or was invited to. The project must already be associated with the dataset's tenant (409 otherwise). Every Org admin of the dataset's tenant is e-mailed. 409 when a request for the same association is pending, or the dataset is already shared with the project. ${LIFETIME}`,
    tags: ['approvals'],
    body: projectDatasetRequestBody,
    status: 201,
    response: projectDatasetApprovalSchema,
    errors: [404, 409],
    handler: ({ body, actor }) => requestProjectDataset(deps, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/approval/pending',
    summary: "The pending requests addressed to the caller's tenant, oldest first",
    description: 'Org admins only (403 otherwise). `skip` and `limit` apply to each of the two lists.',
    tags: ['approvals'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    query: listQuery,
    response: pendingApprovals,
    errors: [403],
    handler: ({ query, actor }) => listPending(deps, actor, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/approval/mine',
    summary: 'The requests the caller made, newest first, in every state',
    description:
      'Any role: the requests this user made (pending, approved, rejected or expired), so that a requester can follow them. A pending request whose 15 days are over shows as expired. `skip` and `limit` apply to each of the two lists.',
    tags: ['approvals'],
    query: listQuery,
    response: myApprovals,
    handler: ({ query, actor }) => listMine(deps, actor, query),
  });
  internal.route({
    method: 'post',
    path: '/api/v1/approval/expire',
    summary: 'Expire the requests older than 15 days (internal)',
    description:
      'Runs at once the expiry that the worker runs hourly, for an operator or an outside scheduler, with COLLAB_INTERNAL_TOKEN as `internal_token` instead of a user token: 401 when it is missing, wrong, or not configured. Running it again changes nothing more.',
    tags: ['approvals'],
    query: expireQuery,
    response: emptyObject,
    errors: [401],
    handler: ({ query }) => expireByOperator(deps, query.internal_token),
  });
  api.route({
    method: 'get',
    path: '/api/v1/approval/{approval_id}',
    summary: 'Get an approval request with its details',
    description:
      'Org admins of the tenant the request is addressed to, or of the tenant that made it (403 for other roles, 404 for other tenants).',
    tags: ['approvals'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: approvalDetailsParams,
    response: approvalDetails,
    errors: [403, 404],
    handler: ({ params, actor }) => getApprovalDetails(deps.db, actor, params.approval_id),
  });
  api.route({
    method: 'post',
    path: '/api/v1/approval/{id}/approve',
    summary: 'Approve a request: the association is made at once',
    description: `${DECISION} Also 409 when the project, the dataset or (for a dataset) the project's association with its tenant is gone.`,
    tags: ['approvals'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: approvalParams,
    response: emptyObject,
    errors: [403, 404, 409],
    handler: ({ params, actor }) => approve(deps, actor, params.id),
  });
  api.route({
    method: 'post',
    path: '/api/v1/approval/{id}/reject',
    summary: 'Reject a request, with an optional reason',
    description: DECISION,
    tags: ['approvals'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: approvalParams,
    body: rejectBody,
    response: emptyObject,
    errors: [403, 404, 409],
    handler: ({ params, body, actor }) => reject(deps, actor, params.id, body?.rejection_reason ?? null),
  });
}
