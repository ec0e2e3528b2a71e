import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { forwardMessage, replyToMessage } from './conversations.js';
import {
  forwardBody,
  listMessagesQuery,
  messagePage,
  messageParams,
  messageSchema,
  replyBody,
  sendMessageBody,
  sendMessageHeaders,
  sendResultSchema,
  updateMessageBody,
} from './schemas.js';
import { answerSend, heldSendResponse, sendDepsOf, sendMessage } from './send.js';
import { getMessage, listMessages, updateMessageLabels } from './service.js';

export function messageRoutes(api: InboxApi, deps: Deps): void {
  const sendDeps = sendDepsOf(deps);
  api.route({
    method: 'post',
    path: '/v1/messages',
    tags: ['messages'],
    summary: 'Send an e-mail or a reply',
    description:
      'The Markdown body is sent as HTML with a plain-text part. `cc` recipients are in the Cc header; `bcc` recipients are ' +
      'on the envelope only, never in any header. `reply_to` sets Reply-To; `labels` are added to the sent message besides `sent`. ' +
      'With `reply_to_thread_id` the message joins that thread ' +
      'with In-Reply-To and References set. An `Idempotency-Key` header makes a retry return the first result and send nothing twice. ' +
      'The message is recorded before the provider is called: when the provider refuses it, the answer is 502 with its reason ' +
      'and the `message_id` of the record, which stays with `metadata.delivery.status` `failed` (the key is then free again). ' +
      'Needs the `send` permission. An API key that is revoked sends nothing once its revocation has answered (401). ' +
      'The safety controls refuse a send with 403 `sending_disabled` (a kill switch is off), 403 `recipient_blocked` ' +
      '(`details.addresses` are refused by the send lists) or 429 `rate_limited` (hourly, daily or new-recipient caps). ' +
      'From an inbox whose `send_policy` is `approval`, nothing is sent: the send becomes a draft pending approval, ' +
      'answered 202 `{"draft": ...}` (POST /v1/drafts/{draft_id}/approve sends it).',
    headers: sendMessageHeaders,
    body: sendMessageBody,
    status: 201,
    response: sendResultSchema,
    otherResponses: heldSendResponse,
    errors: [403, 404, 409, 413, 429, 502, 503],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: async ({ actor, body, headers, res }) =>
      answerSend(res, await sendMessage(sendDeps, { actor, input: body, idempotencyKey: headers['idempotency-key'] })),
  });
  api.route({
    method: 'get',
    path: '/v1/messages',
    tags: ['messages'],
    summary: 'List or search messages',
    description:
      'Needs `inbox_id` or `thread_id`. With `q`, a case-insensitive search whose items carry the search subset of fields.',
    query: listMessagesQuery,
    response: messagePage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => listMessages(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/messages/{message_id}',
    tags: ['messages'],
    summary: 'Get a message',
    params: messageParams,
    response: messageSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, params }) => getMessage(deps.db, scopeOf(actor), params.message_id),
  });
  api.route({
    method: 'post',
    path: '/v1/messages/{message_id}/reply',
    tags: ['messages'],
    summary: 'Reply to a message',
    description:
      'Recipients, the `Re:` subject (never doubled), the thread and In-Reply-To/References are derived from the message. ' +
      'To an inbound message the reply goes to its Reply-To, else its sender; to a sent one, to its recipients again. ' +
      "`reply_all` adds the message's other To recipients to To and its Cc recipients to Cc (as mail clients do), without the inbox's own address and without repeats " +
      '(case-insensitively). Answers as a send does (`Idempotency-Key` too). Needs `send`.',
    params: messageParams,
    headers: sendMessageHeaders,
    body: replyBody,
    status: 201,
    response: sendResultSchema,
    otherResponses: heldSendResponse,
    errors: [404, 409, 413, 429, 502, 503],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: async ({ actor, params, body, headers, res }) =>
      answerSend(
        res,
        await replyToMessage(sendDeps, {
          actor,
          messageId: params.message_id,
          input: body,
          idempotencyKey: headers['idempotency-key'],
        }),
      ),
  });
  api.route({
    method: 'post',
    path: '/v1/messages/{message_id}/forward',
    tags: ['messages'],
    summary: 'Forward a message',
    description:
      'Sends the message, with a `Fwd:` subject, its header block and text below the optional `body` note, and its ' +
      'attachments, to new recipients, in a thread of its own. 413 when the attachments are over the per-message limit. ' +
      'Answers as a send does. Needs `send`.',
    params: messageParams,
    headers: sendMessageHeaders,
    body: forwardBody,
    status: 201,
    response: sendResultSchema,
    otherResponses: heldSendResponse,
    errors: [404, 409, 413, 429, 502, 503],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: async ({ actor, params, body, headers, res }) =>
      answerSend(
        res,
        await forwardMessage(sendDeps, {
          actor,
          messageId: params.message_id,
          input: body,
          idempotencyKey: headers['idempotency-key'],
        }),
      ),
  });
  api.route({
    method: 'patch',
    path: '/v1/messages/{message_id}',
    tags: ['messages'],
    summary: "Change a message's labels",
    description:
      'Adds `add_labels` and removes `remove_labels` (removal wins). Labels are lower-case slugs of at most 64 characters. ' +
      'Inbound messages arrive with `received` and `unread`, sent ones with `sent`; mark a message read by removing `unread` ' +
      '(reading never changes labels). `received` and `sent` cannot be added or removed. Needs `send`.',
    params: messageParams,
    body: updateMessageBody,
    response: messageSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'send'),
    handler: ({ actor, params, body }) => updateMessageLabels(deps.db, scopeOf(actor), params.message_id, body),
  });
}
