import type { CrashPoint } from '@repo/config';
import { isUniqueViolation } from '@repo/db';
import { type Database, pgStatements, pgTransaction, type Statements } from '../database.js';
import { type Inbox, type Message, Prisma } from '../generated/prisma/client.js';
import { uuidv7 } from '../shared/ids.js';
import type { SummaryRequests } from '../summaries/service.js';
import {
  chooseThread,
  participantsOf,
  referencedMessageIds,
  SUBJECT_THREAD_WINDOW_DAYS,
  type ThreadCandidate,
} from '../threads/threading.js';
import { type AttachmentStore, discardStoredObjects, settlePendingObjects, storeAttachments } from './attachments.js';
import type { MessageContent } from './content/index.js';
import type { StorableMail } from './inbound-mail.js';
import { messageEvent } from './events.js';
import { type ReplayToken, recordMessage } from './records.js';

export interface ReceiveDeps extends AttachmentStore {
  emailDomain: string;
  crashPoint: CrashPoint;
  summaries: SummaryRequests;
}

/** What the receiving side adds to a message: labels (`spam`, `unauthenticated`) and metadata (the provider's verdicts). */
export interface ReceiptNotes {
  labels?: string[];
  metadata?: Prisma.InputJsonObject;
  /** Recorded with the message, in its statement (records.ts); a token used before fails it. */
  replayToken?: ReplayToken;
}

/** `content_clean` and preview of a received mail, and what its metadata notes about them (a fallback, say). */
export type ReceivedContent = MessageContent & { metadata?: Prisma.InputJsonObject };

/** What receiving needs to know of the inbox a mail is for. */
export type ReceivingInbox = Pick<Inbox, 'id' | 'organizationId' | 'emailAddress'>;

/** What a receipt answers with: the message stored, now or by an earlier delivery. */
export type ReceivedMessage = Pick<Message, 'id' | 'threadId'>;

/**
 * Stores an inbound message in `inbox`, in the thread chooseThread picks (references, then
 * subject; a new thread otherwise). A redelivery of a Message-ID already received stores nothing
 * and returns the message stored the first time, also when two deliveries race (the unique
 * constraint decides). `content` gives the mail's content_clean and preview, asked for only when
 * the mail is new (a redelivery is answered without cleaning it again). The attachments are
 * written first, journaled until the transaction that records the message commits: a crash
 * between leaves no message and no file. 404 when the inbox is being deleted.
 */
export async function receiveMessage(
  deps: ReceiveDeps,
  inbox: ReceivingInbox,
  mail: StorableMail,
  content: () => Promise<ReceivedContent>,
  notes: ReceiptNotes = {},
): Promise<{ message: ReceivedMessage; duplicate: boolean }> {
  const place = await placeFor(deps.db, inbox, mail);
  if ('received' in place) return { message: place.received, duplicate: true };

  const { contentClean, preview, metadata } = await content();
  const attachments = await storeAttachments(deps, inbox.id, mail.attachments);
  deps.crashPoint('receive:attachments-stored');
  // Known before the record is written: the summary request goes first, the record (with its event) last.
  const threadId = place.threadId ?? uuidv7();
  try {
    const record = (statements: Statements) =>
      recordMessage(statements, {
        inboxId: inbox.id,
        threadId: place.threadId,
        newThreadId: threadId,
        direction: 'inbound',
        status: 'received',
        labels: notes.labels,
        metadata: metadata ? { ...notes.metadata, ...metadata } : notes.metadata,
        replayToken: notes.replayToken,
        providerMessageId: mail.messageId,
        subject: mail.subject,
        subjectKey: mail.subjectKey,
        from: mail.from,
        to: mail.to,
        cc: mail.cc,
        replyTo: mail.replyTo,
        text: mail.text,
        html: mail.html,
        contentClean,
        preview,
        size: mail.size,
        inReplyTo: mail.inReplyTo,
        references: mail.references.join(' ') || null,
        timestamp: mail.date,
        attachments,
        event: (message) => messageEvent('message.received', inbox, message),
      });
    // On pg directly, the bodies as they are (database.ts). The record with its event, last, as
    // appendEvents needs; alone, when nothing else is written with it, as most mail is.
    const alone = attachments.length === 0 && !deps.summaries.enabled;
    const { message } = alone
      ? await record(pgStatements(deps.db.pool))
      : await pgTransaction(deps.db, async (client) => {
          await settlePendingObjects(pgStatements(client), attachments);
          await deps.summaries.request(client, threadId);
          const recorded = await record(pgStatements(client));
          deps.crashPoint('receive:recorded');
          return recorded;
        });
    return { message, duplicate: false };
  } catch (error) {
    await discardStoredObjects(
      deps,
      attachments.map((attachment) => attachment.storageKey),
    );
    // The same message delivered twice at the same moment: the other delivery stored it.
    const raced = isUniqueViolation(error, ['inbox_id', 'direction', 'provider_message_id'])
      ? await findReceived(deps.db, inbox.id, mail.messageId)
      : null;
    if (raced) return { message: raced, duplicate: true };
    throw error;
  }
}

function findReceived(db: Database, inboxId: string, providerMessageId: string): Promise<ReceivedMessage | null> {
  return db.message.findUnique({
    where: { inboxId_direction_providerMessageId: { inboxId, direction: 'inbound', providerMessageId } },
    select: { id: true, threadId: true },
  });
}

/**
 * Where the mail goes: the message the inbox already received under its Message-ID (a
 * redelivery), or the thread it joins (threading.ts, chooseThread; undefined: a new one).
 */
async function placeFor(
  db: Database,
  inbox: ReceivingInbox,
  mail: StorableMail,
): Promise<{ received: ReceivedMessage } | { threadId: string | undefined }> {
  const ids = [...new Set([mail.messageId, ...referencedMessageIds(mail.inReplyTo, mail.references.join(' '))])];
  const { named, sameSubject } = await threadingFacts(db, inbox.id, ids, mail.subjectKey, mail.date);
  const received = named.find((message) => message.direction === 'inbound' && message.providerMessageId === mail.messageId);
  if (received) return { received };
  const threadByMessageId = new Map(named.map((message) => [message.providerMessageId, message.threadId]));
  const threadId = chooseThread({
    referenced: ids.map((id) => threadByMessageId.get(id)),
    sameSubject,
    participants: participantsOf(mail),
    inboxAddress: inbox.emailAddress,
    date: mail.date,
  });
  return { threadId };
}

interface ThreadingRow {
  id: string;
  thread_id: string;
  direction: string | null;
  provider_message_id: string | null;
  last_message_at: Date | null;
  participants: string[] | null;
}

/**
 * What threading reads, in one query (each round trip costs the busy server more than the
 * reading): the inbox's messages with the given Message-IDs, both directions, and its 20 threads
 * of the same subject active most recently within the window of `date` (none for an empty subject).
 */
async function threadingFacts(
  db: Database,
  inboxId: string,
  messageIds: string[],
  subjectKey: string,
  date: Date,
): Promise<{
  named: (ReceivedMessage & { direction: string; providerMessageId: string })[];
  sameSubject: ThreadCandidate[];
}> {
  const window = SUBJECT_THREAD_WINDOW_DAYS * 24 * 3600 * 1000;
  // On pg directly, as every statement on the path each inbound mail takes (database.ts).
  const rows = await pgStatements(db.pool).query<ThreadingRow>(Prisma.sql`
    SELECT id, thread_id, direction::text, provider_message_id, NULL::timestamptz AS last_message_at, NULL::text[] AS participants
      FROM messages
     -- Both directions named, so that the unique index (inbox_id, direction, provider_message_id)
     -- finds the rows: without them, Postgres reads every message of the inbox.
     WHERE inbox_id = ${inboxId}::uuid AND direction IN ('inbound', 'outbound')
       AND provider_message_id = ANY(${messageIds}::text[])
    UNION ALL
    (SELECT id, id, NULL, NULL, last_message_at, participants
       FROM threads
      WHERE inbox_id = ${inboxId}::uuid AND subject_key = ${subjectKey} AND subject_key <> ''
        AND last_message_at BETWEEN ${new Date(date.getTime() - window)}::timestamptz
                                AND ${new Date(date.getTime() + window)}::timestamptz
      ORDER BY last_message_at DESC
      LIMIT 20)`);
  return {
    named: rows.flatMap((row) =>
      row.direction === null || row.provider_message_id === null
        ? []
        : [{ id: row.id, threadId: row.thread_id, direction: row.direction, providerMessageId: row.provider_message_id }],
    ),
    sameSubject: rows.flatMap((row) =>
      row.last_message_at === null || row.participants === null
        ? []
        : [{ id: row.id, lastMessageAt: row.last_message_at, participants: row.participants }],
    ),
  };
}
