import type { CrashPoint } from '@repo/config';
import { isUniqueViolation } from '@repo/db';
import type { Database } from '../database.js';
import type { Inbox, Message, Prisma } from '../generated/prisma/client.js';
import { holdLiveInbox } from '../inboxes/service.js';
import {
  chooseThread,
  newMessageId,
  normalizeSubject,
  parseMessageIds,
  participantsOf,
  referencedMessageIds,
  SUBJECT_THREAD_WINDOW_DAYS,
} from '../threads/threading.js';
import {
  type AttachmentFile,
  type AttachmentStore,
  discardStoredObjects,
  settlePendingObjects,
  storeAttachments,
} from './attachments.js';
import type { MessageContent } from './content/index.js';
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

export interface ReceiveDeps extends AttachmentStore {
  emailDomain: string;
  crashPoint: CrashPoint;
}

/** What the receiving side adds to a message: labels (`spam`, `unauthenticated`) and metadata (the provider's verdicts). */
export interface ReceiptNotes {
  labels?: string[];
  metadata?: Prisma.InputJsonObject;
}

/**
 * Stores an inbound message in `inbox`, in the thread chooseThread picks (references, then
 * subject; a new thread otherwise). A redelivery of a Message-ID already received stores nothing
 * and returns the message stored the first time, also when two deliveries race (the unique
 * constraint decides). `content` is the mail's content_clean and preview. The attachments are
 * written first, journaled until the transaction that records the message commits: a crash
 * between leaves no message and no file. 404 when the inbox is being deleted.
 */
export async function receiveMessage(
  deps: ReceiveDeps,
  inbox: Inbox,
  mail: InboundMail,
  content: MessageContent,
  notes: ReceiptNotes = {},
): Promise<{ message: Message; duplicate: boolean }> {
  const providerMessageId = parseMessageIds(mail.messageId)[0] ?? newMessageId(deps.emailDomain);
  const existing = await findReceived(deps.db, inbox.id, providerMessageId);
  if (existing) return { message: existing, duplicate: true };

  const timestamp = validDate(mail.date) ?? new Date();
  const threadId = await threadFor(deps.db, inbox, { ...mail, messageId: providerMessageId, timestamp });
  const attachments = await storeAttachments(deps, inbox.id, mail.attachments);
  deps.crashPoint('receive:attachments-stored');
  const { contentClean, preview } = content;
  try {
    const { message } = await deps.db.$transaction(async (tx) => {
      await holdLiveInbox(tx, inbox.id);
      const record = await recordMessage(tx, {
        inboxId: inbox.id,
        threadId,
        direction: 'inbound',
        status: 'received',
        labels: notes.labels,
        metadata: notes.metadata,
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
        timestamp,
        attachments,
      });
      await settlePendingObjects(tx, attachments);
      deps.crashPoint('receive:recorded');
      return record;
    });
    return { message, duplicate: false };
  } catch (error) {
    await discardStoredObjects(
      deps,
      attachments.map((attachment) => attachment.storageKey),
    );
    // The same message delivered twice at the same moment: the other delivery stored it.
    const raced = isUniqueViolation(error, ['inbox_id', 'direction', 'provider_message_id'])
      ? await findReceived(deps.db, inbox.id, providerMessageId)
      : null;
    if (raced) return { message: raced, duplicate: true };
    throw error;
  }
}

function findReceived(db: Database, inboxId: string, providerMessageId: string): Promise<Message | null> {
  return db.message.findUnique({
    where: { inboxId_direction_providerMessageId: { inboxId, direction: 'inbound', providerMessageId } },
  });
}

/** The thread the mail joins (threading.ts, chooseThread), from the inbox's messages and recent threads. */
async function threadFor(
  db: Database,
  inbox: Inbox,
  mail: InboundMail & { messageId: string; timestamp: Date },
): Promise<string | undefined> {
  const ids = [...new Set([mail.messageId, ...referencedMessageIds(mail.inReplyTo, mail.references)])];
  const known = await db.message.findMany({
    where: { inboxId: inbox.id, providerMessageId: { in: ids } },
    select: { providerMessageId: true, threadId: true },
  });
  const threadByMessageId = new Map(known.map((message) => [message.providerMessageId, message.threadId]));
  const referenced = ids.map((id) => threadByMessageId.get(id));
  const subjectKey = normalizeSubject(mail.subject);
  const window = SUBJECT_THREAD_WINDOW_DAYS * 24 * 3600 * 1000;
  const sameSubject =
    referenced.some((threadId) => threadId !== undefined) || subjectKey === ''
      ? []
      : await db.thread.findMany({
          where: {
            inboxId: inbox.id,
            subjectKey,
            lastMessageAt: { gte: new Date(mail.timestamp.getTime() - window), lte: new Date(mail.timestamp.getTime() + window) },
          },
          orderBy: { lastMessageAt: 'desc' },
          take: 20,
          select: { id: true, lastMessageAt: true, participants: true },
        });
  return chooseThread({
    referenced,
    sameSubject,
    participants: participantsOf(mail),
    inboxAddress: inbox.emailAddress,
    date: mail.timestamp,
  });
}

/** A Date header far in the future or unparseable is not trusted. */
function validDate(date: Date | undefined): Date | undefined {
  if (!date || Number.isNaN(date.getTime())) return undefined;
  return date.getTime() > Date.now() + 24 * 3600 * 1000 ? undefined : date;
}
