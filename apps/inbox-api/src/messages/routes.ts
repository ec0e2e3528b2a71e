import type { Api } from '@repo/http';
import type { Deps } from '../deps.js';
import {
  listMessagesQuery,
  messagePage,
  messageParams,
  messageSchema,
  sendMessageBody,
  sendMessageHeaders,
  sendResultSchema,
} from './schemas.js';
import { type SendDeps, sendMessage } from './send.js';
import { getMessage, listMessages } from './service.js';

export function messageRoutes(api: Api, deps: Deps): void {
  const sendDeps: SendDeps = {
    ...deps,
    sendLimit: deps.limits.sends,
    emailDomain: deps.config.INBOX_EMAIL_DOMAIN,
    maxAttachmentBytes: deps.config.INBOX_MAX_ATTACHMENT_BYTES,
    leaseSeconds: deps.config.INBOX_SEND_LEASE_SECONDS,
  };
  api.route({
    method: 'post',
    path: '/v1/messages',
    tags: ['messages'],
    summary: 'Send an e-mail or a reply',
    description:
      'The Markdown body is sent as HTML with a plain-text part. With `reply_to_thread_id` the message joins that thread ' +
      'with In-Reply-To and References set. An `Idempotency-Key` header makes a retry return the first result and send nothing twice. ' +
      'The message is recorded before the provider is called: when the provider refuses it, the answer is 502 with its reason ' +
      'and the `message_id` of the record, which stays with `metadata.delivery.status` `failed` (the key is then free again).',
    headers: sendMessageHeaders,
    body: sendMessageBody,
    status: 201,
    response: sendResultSchema,
    errors: [404, 409, 413, 429, 502, 503],
    handler: ({ body, headers }) => sendMessage(sendDeps, { input: body, idempotencyKey: headers['idempotency-key'] }),
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
    handler: ({ query }) => listMessages(deps.db, query),
  });
  api.route({
    method: 'get',
    path: '/v1/messages/{message_id}',
    tags: ['messages'],
    summary: 'Get a message',
    params: messageParams,
    response: messageSchema,
    errors: [404],
    handler: ({ params }) => getMessage(deps.db, params.message_id),
  });
}
