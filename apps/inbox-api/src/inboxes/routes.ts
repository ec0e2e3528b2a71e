import type { Api } from '@repo/http';
import { SEND_TIMEOUT_MS } from '../adapters/mail/index.js';
import type { Deps } from '../deps.js';
import { createInboxBody, inboxPage, inboxParams, inboxSchema, listInboxesQuery } from './schemas.js';
import { createInbox, deleteInbox, findInbox, listInboxes, toInboxResponse } from './service.js';

export function inboxRoutes(api: Api, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/v1/inboxes',
    tags: ['inboxes'],
    summary: 'Create an inbox',
    description: 'The address is `<email_username>@<INBOX_EMAIL_DOMAIN>`; the local part is stored lower-case.',
    body: createInboxBody,
    status: 201,
    response: inboxSchema,
    errors: [409],
    handler: ({ body }) => createInbox(deps.db, deps.config.INBOX_EMAIL_DOMAIN, body),
  });
  api.route({
    method: 'get',
    path: '/v1/inboxes',
    tags: ['inboxes'],
    summary: 'List inboxes, newest first',
    query: listInboxesQuery,
    response: inboxPage,
    handler: ({ query }) => listInboxes(deps.db, query),
  });
  api.route({
    method: 'get',
    path: '/v1/inboxes/{inbox_id}',
    tags: ['inboxes'],
    summary: 'Get an inbox',
    params: inboxParams,
    response: inboxSchema,
    errors: [404],
    handler: async ({ params }) => toInboxResponse(await findInbox(deps.db, params.inbox_id)),
  });
  api.route({
    method: 'delete',
    path: '/v1/inboxes/{inbox_id}',
    tags: ['inboxes'],
    summary: 'Delete an inbox with its threads, messages and stored attachments',
    description:
      'Sends from the inbox that already began are finished first; sends that had not begun when the delete began answer 404 and send nothing.',
    params: inboxParams,
    status: 204,
    errors: [404],
    handler: ({ params }) =>
      deleteInbox(deps, params.inbox_id, {
        // Sends under way end within the provider timeout; a crashed one is left to the reconciler.
        waitSeconds: Math.min(deps.config.INBOX_SEND_LEASE_SECONDS, SEND_TIMEOUT_MS / 1000 + 5),
      }),
  });
}
