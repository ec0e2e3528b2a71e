import type { CrashPoint } from '@repo/config';
import { isUniqueViolation, pgTransaction, uuidv7 } from '@repo/db';
import { NotFoundError } from '@repo/errors';
import { type Database, preparedStatements, sizedTextArray, type Statements } from '../database.js';
import { type Inbox, type Message, Prisma } from '../generated/prisma/client.js';
import type { ListRule } from '../lists/rules.js';
import type { SummaryRequests } from '../summaries/service.js';
import {
  chooseThread,
  participantsOf,
  referencedMessageIds,
  SUBJECT_THREAD_WINDOW_DAYS,
  type ThreadCandidate,
} from '../threads/threading.js';
import { type AttachmentStore, discardStoredObjects, objectKeys, settlePendingObjects, storeAttachments } from './attachments.js';
import type { MessageContent } from './content/index.js';
import type { StorableMail } from './inbound-mail.js';
import { messageEvent } from './events.js';
import { recordMessage, writtenInParts } from './records.js';

export interface ReceiveDeps extends AttachmentStore {
  emailDomain: string;
  crashPoint: CrashPoint;
  summaries: SummaryRequests;
}

/** What the receiving side adds to a message: labels (`spam`, `unauthenticated`) and metadata (the provider's verdicts). */
export interface ReceiptNotes {
  labels?: string[];
  metadata?: Prisma.InputJsonObject;
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
 * between leaves no message and no file. 404 when the inbox is being deleted. `inbox` may come
 * with what recipientsAt read of it; otherwise that is read here.
 */
export async function receiveMessage(
  deps: ReceiveDeps,
  inbox: ReceivingInbox | Recipient,
  mail: StorableMail,
  content: () => Promise<ReceivedContent>,
  notes: ReceiptNotes = {},
): Promise<{ message: ReceivedMessage; duplicate: boolean }> {
  const recipient = 'threading' in inbox ? inbox : await recipientAt(deps.db, inbox, mail);
  const place = placeFor(recipient, mail);
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
    // On pg directly, the bodies as they are (database.ts), prepared. The record with its event,
    // last, as appendEvents needs; alone, when nothing else is written with it, as most mail is
    // (a body long enough to go in parts needs a transaction too).
    const alone =
      attachments.length === 0 && !deps.summaries.enabled && !writtenInParts({ text: mail.text, html: mail.html, contentClean });
    const { message } = alone
      ? await record(preparedStatements(deps.db.pool))
      : await pgTransaction(deps.db, async (client) => {
          await settlePendingObjects(preparedStatements(client), attachments);
          await deps.summaries.request(client, threadId);
          const recorded = await record(preparedStatements(client));
          deps.crashPoint('receive:recorded');
          return recorded;
        });
    return { message, duplicate: false };
  } catch (error) {
    await discardStoredObjects(deps, objectKeys(attachments));
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

/** What threading reads of an inbox for one mail (placeFor). */
export interface ThreadingFacts {
  /** The inbox's messages named by the mail (its own Message-ID, In-Reply-To, References), both directions. */
  named: (ReceivedMessage & { direction: string; providerMessageId: string })[];
  /** Its 20 threads of the mail's subject active most recently within the window of the mail's date. */
  sameSubject: ThreadCandidate[];
}

/** A live inbox a mail is for, with what receiving it there needs: the inbox's receive rules and the threading facts. */
export interface Recipient extends ReceivingInbox {
  /** The receive rules of the inbox and of its organization (lists/rules.ts). */
  receiveRules: ListRule[];
  threading: ThreadingFacts;
}

/**
 * Where the mail goes: the message the inbox already received under its Message-ID (a
 * redelivery), or the thread it joins (threading.ts, chooseThread; undefined: a new one).
 */
function placeFor(recipient: Recipient, mail: StorableMail): { received: ReceivedMessage } | { threadId: string | undefined } {
  const { named, sameSubject } = recipient.threading;
  const received = named.find((message) => message.direction === 'inbound' && message.providerMessageId === mail.messageId);
  if (received) return { received: { id: received.id, threadId: received.threadId } };
  const threadByMessageId = new Map(named.map((message) => [message.providerMessageId, message.threadId]));
  const threadId = chooseThread({
    referenced: namedMessageIds(mail).map((id) => threadByMessageId.get(id)),
    sameSubject,
    participants: participantsOf(mail),
    inboxAddress: recipient.emailAddress,
    date: mail.date,
  });
  return { threadId };
}

/** The Message-IDs threading looks up: the mail's own (a redelivery, or a message the inbox sent), then those it refers to. */
function namedMessageIds(mail: StorableMail): string[] {
  return [...new Set([mail.messageId, ...referencedMessageIds(mail.inReplyTo, mail.references.join(' '))])];
}

/** recipientsAt for one inbox; 404 when it is being deleted. */
async function recipientAt(db: Database, inbox: ReceivingInbox, mail: StorableMail): Promise<Recipient> {
  const [recipient] = await recipientsAt(db, [inbox.emailAddress], mail);
  if (recipient?.id !== inbox.id) throw new NotFoundError('Inbox not found', { inbox_id: inbox.id });
  return recipient;
}

interface RecipientRow extends ReceivingInbox {
  receive_rules: ListRule[];
  named: ThreadingFacts['named'];
  same_subject: { id: string; lastMessageAt: string; participants: string[] }[];
}

/**
 * The live inboxes at `addresses` (by address), each with what receiving `mail` there needs, in
 * one prepared statement (each round trip costs the busy server more than the reading), planned
 * once per connection (its arrays of known length, sizedTextArray: planning it took three times its run): its
 * receive rules and its organization's, its messages named by the mail's Message-IDs (both
 * directions), and its 20 threads of the mail's subject active most recently within the window
 * of the mail's date (none for an empty subject).
 */
export async function recipientsAt(db: Database, addresses: string[], mail: StorableMail): Promise<Recipient[]> {
  if (addresses.length === 0) return [];
  const window = SUBJECT_THREAD_WINDOW_DAYS * 24 * 3600 * 1000;
  const rows = await preparedStatements(db.pool).query<RecipientRow>(Prisma.sql`
    SELECT i.id, i.organization_id AS "organizationId", i.email_address AS "emailAddress",
           (SELECT COALESCE(json_agg(json_build_object(
                     'level', CASE WHEN l.inbox_id IS NULL THEN 'organization' ELSE 'inbox' END, 'type', l.type, 'entry', l.entry)), '[]')
              FROM list_entries l
             WHERE l.direction = 'receive'
               AND (l.inbox_id = i.id OR (l.inbox_id IS NULL AND l.organization_id = i.organization_id))
           ) AS receive_rules,
           (SELECT COALESCE(json_agg(json_build_object(
                     'id', m.id, 'threadId', m.thread_id, 'direction', m.direction, 'providerMessageId', m.provider_message_id)), '[]')
              -- One look-up of the unique index (inbox_id, direction, provider_message_id) per id and
              -- direction, all three columns given: the subquery (LIMIT 1: the key is unique) is planned
              -- alone, so Postgres cannot instead read every message of the inbox and filter them, as it
              -- did with "= ANY" conditions or a join while the table had no statistics yet (bench:ingest).
              FROM unnest(${sizedTextArray(namedMessageIds(mail))}) AS named(id)
              CROSS JOIN unnest('{inbound,outbound}'::"MessageDirection"[]) AS d(direction)
              CROSS JOIN LATERAL (
                SELECT id, thread_id, direction, provider_message_id FROM messages
                 WHERE inbox_id = i.id AND direction = d.direction AND provider_message_id = named.id
                 LIMIT 1) AS m
           ) AS named,
           (SELECT COALESCE(json_agg(json_build_object('id', t.id, 'lastMessageAt', t.last_message_at, 'participants', t.participants)), '[]')
              -- The window and the order are on an expression of last_message_at, so that only the
              -- (inbox_id, subject_key, last_message_at) index can serve this: offered the range on the
              -- column, Postgres read the inbox's threads newest first by (inbox_id, last_message_at) and
              -- filtered them by subject, a read that grew with the inbox (6,000 threads: 6,091 buffers
              -- instead of 3) whenever the table had no statistics yet.
              FROM (SELECT id, last_message_at, participants
                      FROM threads
                     WHERE inbox_id = i.id AND subject_key = ${mail.subjectKey} AND subject_key <> ''
                       AND last_message_at + interval '0 seconds'
                           BETWEEN ${new Date(mail.date.getTime() - window)}::timestamptz
                               AND ${new Date(mail.date.getTime() + window)}::timestamptz
                     ORDER BY last_message_at + interval '0 seconds' DESC
                     LIMIT 20) AS t
           ) AS same_subject
      FROM inboxes i
     WHERE i.email_address = ANY(${sizedTextArray(addresses)}) AND i.deleted_at IS NULL
     ORDER BY i.email_address`);
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organizationId,
    emailAddress: row.emailAddress,
    receiveRules: row.receive_rules,
    threading: {
      named: row.named,
      sameSubject: row.same_subject.map((thread) => ({ ...thread, lastMessageAt: new Date(thread.lastMessageAt) })),
    },
  }));
}
