import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { draftDepsOf, resumeHeldDrafts } from '../drafts/service.js';
import { sendsWaitSeconds } from '../messages/outbox.js';
import { createInboxBody, inboxPage, inboxParams, inboxSchema, listInboxesQuery, updateInboxBody } from './schemas.js';
import { createInbox, deleteInbox, findInbox, listInboxes, toInboxResponse, updateInbox } from './service.js';

export function inboxRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/v1/inboxes',
    tags: ['inboxes'],
    summary: 'Create an inbox',
    description:
      'The address is `<email_username>@<INBOX_EMAIL_DOMAIN>`; the local part is stored lower-case. Needs the `manage` ' +
      'permission and a key for the whole organization (a key limited to some inboxes gets 403).',
    body: createInboxBody,
    status: 201,
    response: inboxSchema,
    errors: [404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, body }) => createInbox(deps.db, deps.config.INBOX_EMAIL_DOMAIN, scopeOf(actor), body),
  });
  api.route({
    method: 'get',
    path: '/v1/inboxes',
    tags: ['inboxes'],
    summary: 'List inboxes, newest first',
    description: 'The inboxes the API key reaches (`read`): those of its organization, or those it is limited to.',
    query: listInboxesQuery,
    response: inboxPage,
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => listInboxes(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/inboxes/{inbox_id}',
    tags: ['inboxes'],
    summary: 'Get an inbox',
    params: inboxParams,
    response: inboxSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: async ({ actor, params }) => toInboxResponse(await findInbox(deps.db, scopeOf(actor), params.inbox_id)),
  });
  api.route({
    method: 'patch',
    path: '/v1/inboxes/{inbox_id}',
    tags: ['inboxes'],
    summary: 'Change an inbox’s name or safety settings',
    description:
      'Needs `manage`. `sending_enabled: false` is the inbox’s kill switch: every send from it answers 403 `sending_disabled` ' +
      'until it is true again (scheduled drafts wait, and go as soon as it is). `send_policy: approval` holds every send from it as a draft pending ' +
      'approval (202 `{"draft": ...}`) until a key with `approve` approves it.',
    params: inboxParams,
    body: updateInboxBody,
    response: inboxSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: async ({ actor, params, body }) => {
      const inbox = await updateInbox(deps.db, scopeOf(actor), params.inbox_id, body);
      if (body.sending_enabled === true) resumeHeldDrafts(draftDepsOf(deps), { inboxId: inbox.id });
      return inbox;
    },
  });
  api.route({
    method: 'delete',
    path: '/v1/inboxes/{inbox_id}',
    tags: ['inboxes'],
    summary: 'Delete an inbox with its threads, messages and stored attachments',
    description:
      'Needs `manage`. Sends from the inbox that already began are finished first; sends that had not begun when the delete began answer 404 and send nothing.',
    params: inboxParams,
    status: 204,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params }) =>
      deleteInbox(deps, scopeOf(actor), params.inbox_id, { waitSeconds: sendsWaitSeconds(deps.config.INBOX_SEND_LEASE_SECONDS) }),
  });
}
