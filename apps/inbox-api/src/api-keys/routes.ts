import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { sendsWaitSeconds } from '../messages/outbox.js';
import { apiKeyPage, apiKeyParams, createApiKeyBody, createdApiKeySchema, listApiKeysQuery } from './schemas.js';
import { requirePermission, scopeOf } from './scope.js';
import { createApiKey, listApiKeys, revokeApiKey } from './service.js';

export function apiKeyRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/v1/api-keys',
    tags: ['api-keys'],
    summary: 'Create an API key',
    description:
      'Answers the key’s record with `key`, its secret, which is shown this once and stored only as a hash. Needs `manage`. ' +
      'An API key creates keys only within its own scope and permissions, with limits no higher than its own (403 otherwise); ' +
      'an organization or inbox outside its scope is not found (404).',
    body: createApiKeyBody,
    status: 201,
    response: createdApiKeySchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, body }) =>
      createApiKey(deps.db, actor, body, {
        perMinute: deps.config.INBOX_RATE_LIMIT_PER_MINUTE,
        sendsPerHour: deps.config.INBOX_SEND_LIMIT_PER_HOUR,
      }),
  });
  api.route({
    method: 'get',
    path: '/v1/api-keys',
    tags: ['api-keys'],
    summary: 'List API keys, newest first',
    description:
      'Never the secrets: `prefix` recognises a key. Needs `manage`; an API key sees the keys of its organization that reach ' +
      'nothing it cannot. Revoked keys are not listed.',
    query: listApiKeysQuery,
    response: apiKeyPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, query }) => listApiKeys(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'delete',
    path: '/v1/api-keys/{api_key_id}',
    tags: ['api-keys'],
    summary: 'Revoke an API key',
    description:
      'Needs `manage`. The key is refused (401) at once by the replica that answers, and by every other within 2 seconds; ' +
      'its sends under way are finished before the answer, and none starts after it.',
    params: apiKeyParams,
    status: 204,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params }) =>
      revokeApiKey(deps, scopeOf(actor), params.api_key_id, {
        waitSeconds: sendsWaitSeconds(deps.config.INBOX_SEND_LEASE_SECONDS),
      }),
  });
}
