import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { createListEntryBody, listEntriesQuery, listEntryPage, listEntryParams, listEntrySchema } from './schemas.js';
import { createListEntry, deleteListEntry, listListEntries } from './service.js';

export function listRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/v1/lists',
    tags: ['lists'],
    summary: 'Add an allow- or block-list entry',
    description:
      'An entry of the organization’s list (`organization_id`: every inbox of it) or of one inbox’s (`inbox_id`), for mail sent ' +
      '(`send`: recipients) or received (`receive`: senders). The entry is an address or a domain (which covers its subdomains), ' +
      'stored lower-case. Block always wins; where a level has an allow list for a direction, only its entries pass, and both ' +
      'levels apply. A refused send answers 403 `recipient_blocked`; refused inbound mail is not stored and a `message.blocked` ' +
      'event records its sender and subject. Needs `manage` (for an organization’s list, a key for the whole organization).',
    body: createListEntryBody,
    status: 201,
    response: listEntrySchema,
    errors: [404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, body }) => createListEntry(deps.db, scopeOf(actor), body),
  });
  api.route({
    method: 'get',
    path: '/v1/lists',
    tags: ['lists'],
    summary: 'List allow- and block-list entries, newest first',
    description: 'Filters combine; without them, every entry the key reaches. Needs `read`.',
    query: listEntriesQuery,
    response: listEntryPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => listListEntries(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'delete',
    path: '/v1/lists/{entry_id}',
    tags: ['lists'],
    summary: 'Remove an allow- or block-list entry',
    description: 'Needs `manage`.',
    params: listEntryParams,
    status: 204,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params }) => deleteListEntry(deps.db, scopeOf(actor), params.entry_id),
  });
}
