import type { OutboundMail } from '../adapters/mail/index.js';
import type { Database } from '../database.js';
import type { Attachment, Message, Prisma } from '../generated/prisma/client.js';
import { normalizeSubject, participantsOf } from '../threads/threading.js';
import type { MessageResponse, SendResult } from './schemas.js';
import { searchTextOf } from './search.js';

/** An attachment whose bytes are already in object storage. */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  size: number;
  disposition: string;
  storageBackend: string;
  storageKey: string;
  contentHash: string;
}

interface NewMessage {
  inboxId: string;
  /** The thread to append to; a new thread is started when omitted. */
  threadId?: string;
  direction: 'inbound' | 'outbound';
  /** `received` for inbound mail; `sending` (with `leaseUntil`) for an outbound message not sent yet. */
  status: 'received' | 'sending';
  leaseUntil?: Date;
  metadata?: Prisma.InputJsonObject;
  labels?: string[];
  providerMessageId: string;
  subject: string;
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  text: string;
  html: string;
  contentClean: string;
  preview: string;
  size: number;
  inReplyTo: string | null;
  references: string | null;
  timestamp: Date;
  attachments: StoredAttachment[];
}

type Transaction = Prisma.TransactionClient | Database;

/** The `size` of a message sent from here: its text and HTML bodies and its attachments, in bytes. */
export function outboundSize(mail: Pick<OutboundMail, 'text' | 'html' | 'attachments'>): number {
  return (
    Buffer.byteLength(mail.text) +
    Buffer.byteLength(mail.html) +
    mail.attachments.reduce((sum, file) => sum + file.content.length, 0)
  );
}

/**
 * The one way a message is written, inbound or outbound: starts its thread or appends to it
 * (count, last activity and participants kept in step), then stores the message and its
 * attachment records. Call inside a transaction.
 */
export async function recordMessage(
  tx: Transaction,
  input: NewMessage,
): Promise<{ message: Message; attachments: Attachment[] }> {
  const now = new Date();
  // A thread's last activity is its newest message's time: mail arriving late (out of order)
  // does not move it back, and a Date header in the future does not move it ahead of now.
  const activity = input.timestamp < now ? input.timestamp : now;
  const participants = participantsOf({ from: input.from, to: input.to, cc: input.cc });
  let threadId = input.threadId;
  if (threadId) {
    await tx.$executeRaw`
      UPDATE threads
         SET message_count = message_count + 1,
             last_message_at = GREATEST(last_message_at, ${activity}),
             participants = participants || ARRAY(
               SELECT p FROM unnest(${participants}::text[]) WITH ORDINALITY AS added(p, n)
                WHERE NOT (p = ANY(participants)) ORDER BY n)
       WHERE id = ${threadId}::uuid`;
  } else {
    const thread = await tx.thread.create({
      data: {
        inboxId: input.inboxId,
        subject: input.subject,
        subjectKey: normalizeSubject(input.subject),
        lastMessageAt: activity,
        messageCount: 1,
        participants,
      },
    });
    threadId = thread.id;
  }
  const message = await tx.message.create({
    data: {
      threadId,
      inboxId: input.inboxId,
      direction: input.direction,
      status: input.status,
      leaseUntil: input.leaseUntil,
      metadata: input.metadata,
      labels: input.labels,
      providerMessageId: input.providerMessageId,
      subject: input.subject,
      fromAddress: input.from,
      toAddresses: input.to,
      ccAddresses: input.cc,
      // The API sends no blind copies, and inbound mail does not reveal them.
      bccAddresses: [],
      replyToAddresses: input.replyTo,
      text: input.text,
      html: input.html,
      contentClean: input.contentClean,
      preview: input.preview,
      size: input.size,
      inReplyTo: input.inReplyTo,
      references: input.references,
      timestamp: input.timestamp,
      createdAt: now,
      search: {
        create: {
          inboxId: input.inboxId,
          threadId,
          createdAt: now,
          searchText: searchTextOf({
            subject: input.subject,
            fromAddress: input.from,
            text: input.text,
            attachmentFilenames: input.attachments.map((attachment) => attachment.filename),
          }),
        },
      },
    },
  });
  const attachments = await Promise.all(
    input.attachments.map((attachment) =>
      tx.attachment.create({
        data: { ...attachment, messageId: message.id, inboxId: input.inboxId, threadId: message.threadId, createdAt: now },
      }),
    ),
  );
  return { message, attachments };
}

// Arrays that are empty mean "no such header": the API shows null, as the spec allows.
const orNull = (values: string[]) => (values.length > 0 ? values : null);

export function toMessageResponse(message: Message): MessageResponse {
  return {
    id: message.id,
    thread_id: message.threadId,
    inbox_id: message.inboxId,
    direction: message.direction,
    provider_message_id: message.providerMessageId,
    subject: message.subject,
    from_address: message.fromAddress,
    to_addresses: message.toAddresses,
    cc_addresses: orNull(message.ccAddresses),
    bcc_addresses: orNull(message.bccAddresses),
    reply_to_addresses: orNull(message.replyToAddresses),
    text: message.text,
    html: message.html,
    content_clean: message.contentClean,
    timestamp: message.timestamp.toISOString(),
    labels: message.labels,
    preview: message.preview,
    size: message.size,
    in_reply_to: message.inReplyTo,
    references: message.references,
    metadata: message.metadata as Record<string, unknown>,
    created_at: message.createdAt.toISOString(),
  };
}

/** The answer to a send (the spec's send-message result). */
export function toSendResult(message: Message, attachments: Attachment[]): SendResult {
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
