import { requirePermission, requireSomePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import {
  createDraftBody,
  draftPage,
  draftParams,
  draftSchema,
  heldSendSchema,
  listDraftsQuery,
  rejectDraftBody,
  updateDraftBody,
} from './schemas.js';
import {
  approveDraft,
  cancelDraft,
  createDraft,
  draftDepsOf,
  getDraft,
  listDrafts,
  rejectDraft,
  submitDraft,
  updateDraft,
} from './service.js';

export function draftRoutes(api: InboxApi, deps: Deps): void {
  const draftDeps = draftDepsOf(deps);
  api.route({
    method: 'post',
    path: '/v1/drafts',
    tags: ['drafts'],
    summary: 'Write a draft',
    description:
      'A message to send later: the body of POST /v1/messages, and optionally `send_at` (in the future, at most a year ' +
      'ahead), which schedules it at once (`scheduled`; under the inbox’s `approval` policy `pending_approval` first). ' +
      'Without `send_at` it stays a `draft` until POST /v1/drafts/{draft_id}/send. Needs `send`.',
    body: createDraftBody,
    status: 201,
    response: draftSchema,
    errors: [403, 404, 413],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: ({ actor, body }) => createDraft(draftDeps, actor, body),
  });
  api.route({
    method: 'get',
    path: '/v1/drafts',
    tags: ['drafts'],
    summary: 'List drafts, newest first',
    description: 'Of the inboxes the key reaches, or of `inbox_id`; `status` filters. Needs `read`, `send` or `approve`.',
    query: listDraftsQuery,
    response: draftPage,
    errors: [404],
    authorize: ({ actor }) => requireSomePermission(actor, 'read', 'send', 'approve'),
    handler: ({ actor, query }) => listDrafts(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/drafts/{draft_id}',
    tags: ['drafts'],
    summary: 'Get a draft',
    description: 'Needs `read`, `send` or `approve`.',
    params: draftParams,
    response: draftSchema,
    errors: [404],
    authorize: ({ actor }) => requireSomePermission(actor, 'read', 'send', 'approve'),
    handler: ({ actor, params }) => getDraft(deps.db, scopeOf(actor), params.draft_id),
  });
  api.route({
    method: 'patch',
    path: '/v1/drafts/{draft_id}',
    tags: ['drafts'],
    summary: 'Change a draft',
    description: 'Only while its status is `draft` (409 after). `send_at: null` clears the send time. Needs `send`.',
    params: draftParams,
    body: updateDraftBody,
    response: draftSchema,
    errors: [404, 409, 413],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: ({ actor, params, body }) => updateDraft(draftDeps, actor, params.draft_id, body),
  });
  api.route({
    method: 'delete',
    path: '/v1/drafts/{draft_id}',
    tags: ['drafts'],
    summary: 'Cancel a draft',
    description:
      'A draft that is `draft`, `pending_approval` or `scheduled` becomes `cancelled` (a scheduled one is then never sent); ' +
      'sent, rejected and cancelled drafts answer 409. The draft is kept, and returned. Needs `send`.',
    params: draftParams,
    response: draftSchema,
    errors: [404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: ({ actor, params }) => cancelDraft(draftDeps, actor, params.draft_id),
  });
  api.route({
    method: 'post',
    path: '/v1/drafts/{draft_id}/send',
    tags: ['drafts'],
    summary: 'Send a draft',
    description:
      'Asks the kill switches and send lists first (403 `sending_disabled`, `recipient_blocked`). Under the inbox’s ' +
      '`approval` policy the draft then waits for approval: 202 `{"draft": ...}` in `pending_approval`. Otherwise it is ' +
      '`scheduled` and, without a `send_at` in the future, sent at once: 200 `{"draft": ...}`, `sent` with its `message_id` ' +
      '(or still `scheduled` with `last_error` when a cap or the provider held it back: it is tried again). A draft ' +
      'already `scheduled` is not scheduled again: before its `send_at` it is answered as it is. Needs `send`.',
    params: draftParams,
    response: heldSendSchema,
    otherResponses: { 202: { description: 'Held for approval (`pending_approval`)', schema: heldSendSchema } },
    errors: [403, 404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: async ({ actor, params, res }) => {
      const { draft, held } = await submitDraft(draftDeps, actor, params.draft_id);
      if (!held) return { draft };
      res.status(202).json({ draft });
      return undefined;
    },
  });
  api.route({
    method: 'post',
    path: '/v1/drafts/{draft_id}/approve',
    tags: ['drafts'],
    summary: 'Approve a draft pending approval, and send it',
    description:
      'Needs the `approve` permission (the sending agent’s own key cannot approve unless it has it: 403). Only a draft ' +
      '`pending_approval` can be approved: approving twice, or a rejected or cancelled draft, answers 409; of concurrent ' +
      'approvals exactly one succeeds and the draft is sent once. Without a `send_at` in the future it is sent at once ' +
      '(`sent`); else `scheduled` until then.',
    params: draftParams,
    response: draftSchema,
    errors: [404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'approve'),
    handler: ({ actor, params }) => approveDraft(draftDeps, actor, params.draft_id),
  });
  api.route({
    method: 'post',
    path: '/v1/drafts/{draft_id}/reject',
    tags: ['drafts'],
    summary: 'Reject a draft pending approval',
    description:
      'Needs `approve`. The reason, if given, is kept on the draft (`rejection_reason`). Only a draft `pending_approval` (409 otherwise).',
    params: draftParams,
    body: rejectDraftBody,
    response: draftSchema,
    errors: [404, 409],
    authorize: ({ actor }) => requirePermission(actor, 'approve'),
    handler: ({ actor, params, body }) => rejectDraft(draftDeps, actor, params.draft_id, body?.reason),
  });
}
