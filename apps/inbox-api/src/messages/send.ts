import { PayloadTooLargeError } from '@repo/errors';
import type { Logger } from '@repo/http';
import type { RateLimit } from '@repo/rate-limit';
import type { ObjectStorage } from '@repo/storage';
import type { MailTransport } from '../adapters/mail/index.js';
import type { Database } from '../database.js';
import type { Attachment, Message } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { findThread, latestMessage } from '../threads/service.js';
import { newMessageId, replyHeaders } from '../threads/threading.js';
import { type AttachmentFile, removeStoredAttachments, storeAttachments } from './attachments.js';
import { messageContent, renderMarkdown } from './content.js';
import { claimIdempotencyKey, releaseIdempotencyKey } from './idempotency.js';
import { outboundSize, recordMessage } from './records.js';
import type { SendMessageInput, SendResult } from './schemas.js';

interface SendDeps {
  db: Database;
  storage: ObjectStorage;
  mailer: MailTransport;
  /** Sends per inbox per hour. */
  sendLimit: RateLimit;
  logger: Logger;
  emailDomain: string;
  maxAttachmentBytes: number;
}

/**
 * Sends a message and records it. Nothing is recorded as sent unless the provider accepted it,
 * and no transaction is held while the provider works (local delivery needs the database too).
 * With an Idempotency-Key, a retry returns the first result and sends nothing twice.
 */
export async function sendMessage(deps: SendDeps, input: SendMessageInput, idempotencyKey?: string): Promise<SendResult> {
  const inbox = await findInbox(deps.db, input.inbox_id);
  const thread = input.reply_to_thread_id
    ? await findThread(deps.db, { threadId: input.reply_to_thread_id, inboxId: inbox.id })
    : undefined;
  const files = decodeAttachments(input.attachments ?? [], deps.maxAttachmentBytes);
  const claim = idempotencyKey
    ? await claimIdempotencyKey(deps.db, { inboxId: inbox.id, key: idempotencyKey, request: input })
    : undefined;
  if (claim && 'replay' in claim) return claim.replay;
  const claimed = claim?.claimed;

  const messageId = newMessageId(deps.emailDomain);
  let sent = false;
  try {
    await deps.sendLimit.consume(inbox.id);
    const { html, text } = renderMarkdown(input.body);
    const { contentClean, preview } = messageContent({ html, text });
    const latest = thread ? await latestMessage(deps.db, thread.id) : null;
    const reply = latest ? replyHeaders(latest) : undefined;
    const stored = await storeAttachments(deps.storage, inbox.id, files);
    let providerMessageId: string;
    try {
      // Recipients' replies quote the Message-ID the provider delivered, which SES replaces with its own.
      ({ messageId: providerMessageId } = await deps.mailer.send({
        from: inbox.emailAddress,
        to: input.to,
        subject: input.subject,
        text,
        html,
        messageId,
        inReplyTo: reply?.inReplyTo,
        references: reply?.references,
        attachments: files,
      }));
    } catch (error) {
      await removeStoredAttachments(deps.storage, stored);
      throw error;
    }
    sent = true;
    return await deps.db.$transaction(async (tx) => {
      const { message, attachments } = await recordMessage(tx, {
        inboxId: inbox.id,
        threadId: thread?.id,
        direction: 'outbound',
        providerMessageId,
        subject: input.subject,
        from: inbox.emailAddress,
        to: input.to,
        cc: [],
        replyTo: [],
        text,
        html,
        contentClean,
        preview,
        size: outboundSize({ text, html, attachments: files }),
        inReplyTo: reply?.inReplyTo ?? null,
        references: reply?.references.join(' ') ?? null,
        timestamp: new Date(),
        attachments: stored,
      });
      const result = toSendResult(message, attachments);
      if (claimed) {
        await tx.idempotencyKey.update({ where: { inboxId_key: claimed }, data: { response: result, completedAt: new Date() } });
      }
      return result;
    });
  } catch (error) {
    if (!sent && claimed) await releaseIdempotencyKey(deps.db, claimed);
    if (sent) deps.logger.error({ err: error, inboxId: inbox.id, messageId }, 'message was sent but could not be recorded');
    throw error;
  }
}

/** Decodes base64 attachments, refusing more than `maxBytes` in all (413) before anything is stored or sent. */
function decodeAttachments(
  attachments: { filename: string; content_type: string; content: string }[],
  maxBytes: number,
): AttachmentFile[] {
  const files = attachments.map((attachment) => ({
    filename: attachment.filename,
    contentType: attachment.content_type,
    content: Buffer.from(attachment.content, 'base64'),
  }));
  const total = files.reduce((sum, file) => sum + file.content.length, 0);
  if (total > maxBytes) {
    throw new PayloadTooLargeError(`Attachments total ${total} bytes; at most ${maxBytes} bytes are allowed per message`, {
      limit_bytes: maxBytes,
      size_bytes: total,
    });
  }
  return files;
}

function toSendResult(message: Message, attachments: Attachment[]): SendResult {
  return {
    id: message.id,
    thread_id: message.threadId,
    inbox_id: message.inboxId,
    direction: 'OUTBOUND',
    to: message.toAddresses,
    subject: message.subject,
    content_clean: message.contentClean,
    ...(attachments.length > 0 && {
      attachments: attachments.map((attachment) => ({
        id: attachment.id,
        filename: attachment.filename,
        content_type: attachment.contentType,
        size: attachment.size,
      })),
    }),
    created_at: message.createdAt.toISOString(),
  };
}
