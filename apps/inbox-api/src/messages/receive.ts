import type { ObjectStorage } from '@repo/storage';
import { isUniqueViolation } from '@repo/db';
import type { Database } from '../database.js';
import type { Inbox, Message } from '../generated/prisma/client.js';
import { newMessageId, parseMessageIds, referencedMessageIds } from '../threads/threading.js';
import { type AttachmentFile, removeStoredAttachments, storeAttachments } from './attachments.js';
import { type MessageContent, messageContent } from './content.js';
import { recordMessage } from './records.js';

/** An e-mail as it arrives, from a provider webhook or from local delivery. */
export interface InboundMail {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  text: string;
  html: string;
  /** Message-ID header; one is made up when the mail has none (it then cannot be deduplicated). */
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  date?: Date;
  /** Size of the MIME source in bytes. */
  size: number;
  attachments: AttachmentFile[];
}

export interface ReceiveDeps {
  db: Database;
  storage: ObjectStorage;
  emailDomain: string;
}

/**
 * Stores an inbound message in `inbox`, in the thread its In-Reply-To/References point to
 * (a new thread otherwise). A redelivery of a Message-ID already in the inbox stores nothing
 * and returns the message stored the first time. `content` is the mail's `messageContent`, when
 * the caller already has it (one mail delivered to several inboxes); it is computed otherwise.
 */
export async function receiveMessage(
  deps: ReceiveDeps,
  inbox: Inbox,
  mail: InboundMail,
  content?: MessageContent,
): Promise<{ message: Message; duplicate: boolean }> {
  const providerMessageId = parseMessageIds(mail.messageId)[0] ?? newMessageId(deps.emailDomain);
  const existing = await findByMessageId(deps.db, inbox.id, providerMessageId);
  if (existing) return { message: existing, duplicate: true };

  const threadId = await threadFor(deps.db, inbox.id, mail);
  const attachments = await storeAttachments(deps.storage, inbox.id, mail.attachments);
  const { contentClean, preview } = content ?? messageContent(mail);
  try {
    const { message } = await deps.db.$transaction((tx) =>
      recordMessage(tx, {
        inboxId: inbox.id,
        threadId,
        direction: 'inbound',
        providerMessageId,
        subject: mail.subject,
        from: mail.from,
        to: mail.to,
        cc: mail.cc,
        replyTo: mail.replyTo,
        text: mail.text,
        html: mail.html,
        contentClean,
        preview,
        size: mail.size,
        inReplyTo: parseMessageIds(mail.inReplyTo)[0] ?? null,
        references: parseMessageIds(mail.references).join(' ') || null,
        timestamp: validDate(mail.date) ?? new Date(),
        attachments,
      }),
    );
    return { message, duplicate: false };
  } catch (error) {
    await removeStoredAttachments(deps.storage, attachments);
    // The same message delivered twice at the same moment: the other delivery stored it.
    const raced = isUniqueViolation(error, ['inbox_id', 'provider_message_id'])
      ? await findByMessageId(deps.db, inbox.id, providerMessageId)
      : null;
    if (raced) return { message: raced, duplicate: true };
    throw error;
  }
}

function findByMessageId(db: Database, inboxId: string, providerMessageId: string): Promise<Message | null> {
  return db.message.findUnique({ where: { inboxId_providerMessageId: { inboxId, providerMessageId } } });
}

/** The thread of the first referenced message that is in this inbox. */
async function threadFor(db: Database, inboxId: string, mail: InboundMail): Promise<string | undefined> {
  const ids = referencedMessageIds(mail.inReplyTo, mail.references);
  if (ids.length === 0) return undefined;
  const known = await db.message.findMany({
    where: { inboxId, providerMessageId: { in: ids } },
    select: { providerMessageId: true, threadId: true },
  });
  const threadByMessageId = new Map(known.map((message) => [message.providerMessageId, message.threadId]));
  return ids.map((id) => threadByMessageId.get(id)).find((threadId) => threadId !== undefined);
}

/** A Date header far in the future or unparseable is not trusted. */
function validDate(date: Date | undefined): Date | undefined {
  if (!date || Number.isNaN(date.getTime())) return undefined;
  return date.getTime() > Date.now() + 24 * 3600 * 1000 ? undefined : date;
}
