import { BadRequestError } from '@repo/errors';
import { type Actor, scopeOf } from '../api-keys/scope.js';
import { findInbox } from '../inboxes/service.js';
import { readAttachment } from './attachments.js';
import { forwardBody, forwardSubject, replyRecipients, replySubject } from './replies.js';
import { type ForwardInput, MAX_RECIPIENTS, type ReplyInput, type SendResult } from './schemas.js';
import { checkAttachmentTotal, type HeldSend, type SendDeps, sendMessage } from './send.js';
import { findMessage } from './service.js';

/**
 * A reply to a message: its recipients, `Re:` subject, thread, In-Reply-To and References are
 * derived from it (replies.ts); the send itself is sendMessage's, like any other.
 */
export async function replyToMessage(
  deps: SendDeps,
  options: { actor: Actor; messageId: string; input: ReplyInput; idempotencyKey?: string },
): Promise<SendResult | HeldSend> {
  const scope = scopeOf(options.actor);
  const message = await findMessage(deps.db, scope, options.messageId);
  const inbox = await findInbox(deps.db, scope, message.inboxId);
  const { input } = options;
  const recipients = replyRecipients(message, {
    inboxAddress: inbox.emailAddress,
    replyAll: input.reply_all ?? false,
    cc: input.cc,
    bcc: input.bcc,
  });
  if (recipients.to.length === 0) {
    throw new BadRequestError(
      'The message has nobody to reply to but this inbox (addresses that are not plain name@domain are left out)',
      { message_id: message.id },
    );
  }
  // A received mail may name any number of addresses; a reply names no more than a send may.
  const crowded = (['to', 'cc', 'bcc'] as const).find((field) => recipients[field].length > MAX_RECIPIENTS);
  if (crowded) {
    throw new BadRequestError(
      `The reply would have ${recipients[crowded].length} ${crowded} recipients, more than the ${MAX_RECIPIENTS} a send may name` +
        (input.reply_all ? ': reply without reply_all and name those to copy in cc' : ''),
      { message_id: message.id, field: crowded, count: recipients[crowded].length, max: MAX_RECIPIENTS },
    );
  }
  return sendMessage(deps, {
    actor: options.actor,
    idempotencyKey: options.idempotencyKey,
    input: {
      inbox_id: inbox.id,
      ...recipients,
      reply_to: undefined,
      subject: replySubject(message.subject),
      body: input.body,
      reply_to_thread_id: message.threadId,
      attachments: input.attachments,
      labels: input.labels,
    },
    answering: {
      id: message.id,
      providerMessageId: message.providerMessageId,
      references: message.references,
      inReplyTo: message.inReplyTo,
    },
  });
}

/**
 * A forward of a message to new recipients: `Fwd:` subject, the note above the forwarded header
 * block and text, and the message's attachments carried along (413 when they, with nothing
 * else, are over the limit). It starts a thread of its own.
 */
export async function forwardMessage(
  deps: SendDeps,
  options: { actor: Actor; messageId: string; input: ForwardInput; idempotencyKey?: string },
): Promise<SendResult | HeldSend> {
  const scope = scopeOf(options.actor);
  const message = await findMessage(deps.db, scope, options.messageId);
  const attachments = await deps.db.attachment.findMany({
    where: { messageId: message.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  checkAttachmentTotal(
    attachments.reduce((sum, attachment) => sum + attachment.size, 0),
    deps.maxAttachmentBytes,
  );
  const files = await Promise.all(
    attachments.map(async (attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: await readAttachment(deps.storage, attachment),
    })),
  );
  const { input } = options;
  return sendMessage(deps, {
    actor: options.actor,
    idempotencyKey: options.idempotencyKey,
    input: {
      inbox_id: message.inboxId,
      to: input.to,
      cc: input.cc,
      bcc: input.bcc,
      reply_to: undefined,
      subject: forwardSubject(message.subject),
      body: forwardBody(input.body, message),
      labels: input.labels,
    },
    forwarding: { id: message.id, files },
  });
}
