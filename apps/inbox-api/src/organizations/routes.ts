import { requireOperator, requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { draftDepsOf, resumeHeldDrafts } from '../drafts/service.js';
import {
  createOrganizationBody,
  listOrganizationsQuery,
  organizationPage,
  organizationParams,
  organizationSchema,
  updateOrganizationBody,
} from './schemas.js';
import {
  createOrganization,
  deleteOrganization,
  findOrganization,
  listOrganizations,
  toOrganizationResponse,
  updateOrganization,
} from './service.js';

export function organizationRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/v1/organizations',
    tags: ['organizations'],
    summary: 'Create an organization',
    description: 'Operator keys only (INBOX_API_KEYS, or anyone when the service runs without keys).',
    body: createOrganizationBody,
    status: 201,
    response: organizationSchema,
    authorize: ({ actor }) => requireOperator(actor),
    handler: ({ body }) => createOrganization(deps.db, body),
  });
  api.route({
    method: 'get',
    path: '/v1/organizations',
    tags: ['organizations'],
    summary: 'List organizations, newest first',
    description: 'Operators see every organization; an API key sees its own.',
    query: listOrganizationsQuery,
    response: organizationPage,
    handler: ({ actor, query }) => listOrganizations(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/organizations/{organization_id}',
    tags: ['organizations'],
    summary: 'Get an organization',
    description: 'Another organization than an API key’s own is not found (404).',
    params: organizationParams,
    response: organizationSchema,
    errors: [404],
    handler: async ({ actor, params }) =>
      toOrganizationResponse(await findOrganization(deps.db, scopeOf(actor), params.organization_id)),
  });
  api.route({
    method: 'patch',
    path: '/v1/organizations/{organization_id}',
    tags: ['organizations'],
    summary: 'Change an organization’s name or kill switch',
    description:
      'Needs `manage` and a key for the whole organization (or an operator key). `sending_enabled: false` stops every send ' +
      'from every inbox of the organization (403 `sending_disabled`) until it is true again; scheduled drafts wait, and go as soon as it is.',
    params: organizationParams,
    body: updateOrganizationBody,
    response: organizationSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: async ({ actor, params, body }) => {
      const organization = await updateOrganization(deps.db, scopeOf(actor), params.organization_id, body);
      if (body.sending_enabled === true) {
        resumeHeldDrafts(draftDepsOf(deps), { organizationId: organization.id });
      }
      return organization;
    },
  });
  api.route({
    method: 'delete',
    path: '/v1/organizations/{organization_id}',
    tags: ['organizations'],
    summary: 'Delete an organization with its API keys',
    description:
      'Operator keys only. Refused (409) while the organization has inboxes, and always for `default`. ' +
      'Its API keys stop working at once on the replica that answers, and on every other within 2 seconds.',
    params: organizationParams,
    status: 204,
    errors: [404, 409],
    authorize: ({ actor }) => requireOperator(actor),
    handler: ({ params }) => deleteOrganization(deps, params.organization_id),
  });
}
