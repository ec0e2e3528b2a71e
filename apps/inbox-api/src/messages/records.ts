import { uuidv7 } from '@repo/db';
import { setImmediate } from 'node:timers/promises';
import { NotFoundError } from '@repo/errors';
import type { OutboundMail } from '../adapters/mail/index.js';
import type { Statements } from '../database.js';
import { appendEventsCtes, type NewEvent } from '../events/log.js';
import { type Attachment, type Message, Prisma } from '../generated/prisma/client.js';
import { participantsOf } from '../threads/threading.js';
import type { MessageResponse, SendResult } from './schemas.js';
import { initialLabels } from './labels.js';
import type { DeliveryDetail } from '../webhooks/delivery-status.js';
import { searchTextOf } from './search.js';

/** An attachment whose bytes are already in object storage (`storageKey`), or go in its record (`content`). */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  size: number;
  disposition: string;
  storageBackend: string;
  storageKey: string | null;
  content: Buffer | null;
  contentHash: string;
}

interface NewMessage {
  inboxId: string;
  /** The API key that sends it (outbound messages sent with one). */
  apiKeyId?: string;
  /** The thread to append to; a new thread is started when omitted. */
  threadId?: string;
  /** The id of the thread started when `threadId` is omitted (one is drawn when this is omitted too). */
  newThreadId?: string;
  direction: 'inbound' | 'outbound';
  /** `received` for inbound mail; `sending` (with `leaseUntil`) for an outbound message not sent yet. */
  status: 'received' | 'sending';
  leaseUntil?: Date;
  metadata?: Prisma.InputJsonObject;
  /** Labels besides the system's for the direction (`received`, `unread`; `sent`): labels.ts. */
  labels?: string[];
  providerMessageId: string;
  subject: string;
  /** threading.ts's subjectKey of the subject (of the whole subject, when a long one was capped). */
  subjectKey: string;
  from: string;
  to: string[];
  cc: string[];
  /** Blind copies of a message sent from here (the sender's record keeps them; no header carries them). */
  bcc?: string[];
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
  /**
   * The event that reports the message, appended in the same statement (one round trip, not a
   * transaction of two): the statement is then the last its transaction may run (appendEvents).
   */
  event?: (message: Message) => NewEvent;
}

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
 * (count, last activity and participants kept in step), then stores the message, its search row
 * and its attachment records. One statement: each round trip costs the busy server more than the
 * writing, and the thread's row, which every message of a busy thread locks, is then held only
 * until the commit that follows. It holds the inbox as holdLiveInbox does: 404, and nothing
 * written, when the inbox is being deleted. A message already stored under the same Message-ID
 * and direction fails the unique constraint. On a transaction's statements, or alone: it commits
 * whole or not at all either way. A body over BODY_PART_CHARS goes first, in parts (writeBodyParts):
 * such a message needs a transaction's statements (writtenInParts).
 */
export async function recordMessage(
  statements: Statements,
  input: NewMessage,
): Promise<{ message: Message; attachments: Attachment[] }> {
  const now = new Date();
  const message: Message = {
    id: uuidv7(),
    threadId: input.threadId ?? input.newThreadId ?? uuidv7(),
    inboxId: input.inboxId,
    direction: input.direction,
    status: input.status,
    leaseUntil: input.leaseUntil ?? null,
    providerMessageId: input.providerMessageId,
    subject: input.subject,
    fromAddress: input.from,
    toAddresses: input.to,
    ccAddresses: input.cc,
    // Inbound mail does not reveal blind copies; a sent message's record keeps its own.
    bccAddresses: input.bcc ?? [],
    replyToAddresses: input.replyTo,
    text: input.text,
    html: input.html,
    contentClean: input.contentClean,
    preview: input.preview,
    size: input.size,
    inReplyTo: input.inReplyTo,
    references: input.references,
    labels: initialLabels(input.direction, input.labels),
    metadata: (input.metadata ?? {}) as Prisma.JsonObject,
    timestamp: input.timestamp,
    createdAt: now,
    apiKeyId: input.apiKeyId ?? null,
    // Written when the send completes (outbox.ts) and by the providers' delivery events; the insert leaves them null.
    transportMessageId: null,
    deliveryStatus: null,
    deliveryDetail: null,
  };
  const attachments = input.attachments.map((attachment): Attachment => ({
    ...attachment,
    // The record's type wants an ArrayBuffer under it; an unparsed mail's source is in shared memory
    // (parse.ts), which the rows below only read.
    content: attachment.content as Attachment['content'],
    id: uuidv7(),
    messageId: message.id,
    inboxId: message.inboxId,
    threadId: message.threadId,
    createdAt: now,
  }));
  const searchText = searchTextOf({
    subject: message.subject,
    fromAddress: message.fromAddress,
    text: message.text,
    attachmentFilenames: attachments.map((attachment) => attachment.filename),
  });
  const parted = await writeBodyParts(statements, message);
  const [outcome] = await statements.query<{ live: boolean; recorded: boolean }>(Prisma.sql`
    WITH ${parted.size > 0 ? Prisma.sql`parts AS (${takeBodyParts(message.id)}), ` : Prisma.empty}live AS (
      SELECT id FROM inboxes WHERE id = ${message.inboxId}::uuid AND deleted_at IS NULL FOR SHARE
    ), thread AS (${input.threadId ? appendToThread(message, now) : startThread(message, input.subjectKey, now)}
    ), recorded AS (${insertMessage(message, parted)}
    ), search AS (
      INSERT INTO message_search (message_id, inbox_id, thread_id, created_at, search_text)
      SELECT id, inbox_id, thread_id, created_at, ${searchText} FROM recorded
    ), files AS (${insertAttachments(await attachmentRows(attachments))}
    )${input.event ? Prisma.sql`, ${messageEventCtes(input.event(message))}` : Prisma.empty}
    SELECT EXISTS (SELECT FROM live) AS live, EXISTS (SELECT FROM recorded) AS recorded${
      input.event ? Prisma.sql`, (SELECT count(*) FROM notified) AS events` : Prisma.empty
    }`);
  if (!outcome?.live) throw new NotFoundError('Inbox not found', { inbox_id: message.inboxId });
  // Threads go only with their inbox: a live inbox has every thread it ever had.
  if (!outcome.recorded) throw new Error(`Thread ${message.threadId} of inbox ${message.inboxId} is missing`);
  return { message, attachments };
}

/**
 * A thread's last activity is its newest message's time: mail arriving late (out of order) does
 * not move it back, and a Date header in the future does not move it ahead of now.
 */
function activityOf(message: Message, now: Date): Date {
  return message.timestamp < now ? message.timestamp : now;
}

function participantsOfMessage(message: Message): string[] {
  return participantsOf({ from: message.fromAddress, to: message.toAddresses, cc: message.ccAddresses });
}

/** `thread`'s part of recordMessage: the existing thread gains the message, once the inbox is held. */
function appendToThread(message: Message, now: Date): Prisma.Sql {
  return Prisma.sql`
      UPDATE threads
         SET message_count = message_count + 1,
             last_message_at = GREATEST(last_message_at, ${activityOf(message, now)}),
             participants = participants || ARRAY(
               SELECT p FROM unnest(${participantsOfMessage(message)}::text[]) WITH ORDINALITY AS added(p, n)
                WHERE NOT (p = ANY(participants)) ORDER BY n)
       WHERE id = ${message.threadId}::uuid AND EXISTS (SELECT FROM live)
      RETURNING id`;
}

/** `thread`'s part of recordMessage: a new thread, started by the message. */
function startThread(message: Message, subjectKey: string, now: Date): Prisma.Sql {
  return Prisma.sql`
      INSERT INTO threads (id, inbox_id, subject, subject_key, last_message_at, message_count, participants, created_at)
      SELECT ${message.threadId}::uuid, id, ${message.subject}, ${subjectKey},
             ${activityOf(message, now)}::timestamptz, 1, ${participantsOfMessage(message)}::text[], ${now}::timestamptz
        FROM live
      RETURNING id`;
}

function insertMessage(message: Message, parted: ReadonlySet<BodyName>): Prisma.Sql {
  // A body written in parts is joined from them (the parts CTE), the others go as parameters.
  const body = (name: BodyName, value: string) =>
    parted.has(name)
      ? Prisma.sql`(SELECT string_agg(chunk, '' ORDER BY seq) FROM parts WHERE body = ${name})`
      : Prisma.sql`${value}`;
  return Prisma.sql`
      INSERT INTO messages (id, thread_id, inbox_id, direction, status, lease_until, provider_message_id, subject,
                            from_address, to_addresses, cc_addresses, bcc_addresses, reply_to_addresses, text, html,
                            content_clean, preview, size, in_reply_to, "references", labels, metadata, timestamp, created_at,
                            api_key_id)
      SELECT ${message.id}::uuid, id, ${message.inboxId}::uuid, ${message.direction}::"MessageDirection",
             ${message.status}::"MessageStatus", ${message.leaseUntil}::timestamptz, ${message.providerMessageId},
             ${message.subject}, ${message.fromAddress}, ${message.toAddresses}::text[], ${message.ccAddresses}::text[],
             ${message.bccAddresses}::text[], ${message.replyToAddresses}::text[], ${body('text', message.text)}, ${body('html', message.html)},
             ${body('content_clean', message.contentClean)}, ${message.preview}, ${message.size}::int, ${message.inReplyTo}, ${message.references},
             ${message.labels}::text[], ${JSON.stringify(message.metadata)}::jsonb, ${message.timestamp}::timestamptz,
             ${message.createdAt}::timestamptz, ${message.apiKeyId}::uuid
        FROM thread
      RETURNING id, inbox_id, thread_id, created_at, text, html, content_clean`;
}

type BodyName = 'text' | 'html' | 'content_clean';

/**
 * Bodies longer than this many characters go to Postgres in parts of this size, a statement each,
 * rather than as one parameter of the message's statement: node-postgres writes a statement's
 * parameters into one Bind message at once, on the event loop: 45 to 270 ms for two 20 MB bodies
 * on the machines of docs/benchmarks.md ("Mail of 20 MB"), against 3 to 9 ms for a part.
 */
export const BODY_PART_CHARS = 1 << 20;

/** Whether recordMessage writes a body of `message` in parts: it must then be given a transaction's statements. */
export function writtenInParts(message: Pick<NewMessage, 'text' | 'html' | 'contentClean'>): boolean {
  return [message.text, message.html, message.contentClean].some((body) => body.length > BODY_PART_CHARS);
}

/**
 * Pure: `body` cut into parts of at most `size` characters (UTF-16 code units), never between the
 * two halves of a surrogate pair (a lone half would reach Postgres as U+FFFD).
 */
export function bodyParts(body: string, size: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < body.length;) {
    let end = Math.min(start + size, body.length);
    const last = body.charCodeAt(end - 1);
    if (end < body.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(body.slice(start, end));
    start = end;
  }
  return parts;
}

/**
 * Writes the message's bodies longer than BODY_PART_CHARS as rows of message_body_parts, one
 * statement per part (each awaited, so that the event loop has its turn between them); answers
 * which bodies it wrote. The message's statement then takes the rows and deletes them
 * (takeBodyParts), in the same transaction: a crash or a failure leaves none behind.
 */
async function writeBodyParts(statements: Statements, message: Message): Promise<Set<BodyName>> {
  const parted = new Set<BodyName>();
  if (!writtenInParts(message)) return parted;
  if (!statements.transactional) throw new Error('A message with a body written in parts is recorded in a transaction');
  const bodies: [BodyName, string][] = [
    ['text', message.text],
    ['html', message.html],
    ['content_clean', message.contentClean],
  ];
  for (const [name, value] of bodies) {
    if (value.length <= BODY_PART_CHARS) continue;
    const parts = bodyParts(value, BODY_PART_CHARS);
    for (const [seq, chunk] of parts.entries()) {
      await statements.query(Prisma.sql`
        INSERT INTO message_body_parts (message_id, body, seq, chunk) VALUES (${message.id}::uuid, ${name}, ${seq}::int, ${chunk})`);
    }
    parted.add(name);
  }
  return parted;
}

/** The `parts` CTE of recordMessage's statement: the message's parts, deleted as they are read. */
function takeBodyParts(messageId: string): Prisma.Sql {
  return Prisma.sql`DELETE FROM message_body_parts WHERE message_id = ${messageId}::uuid RETURNING body, seq, chunk`;
}

/**
 * recordMessage's event, its append lock taken once the message is written (its thread's row
 * locked). Its data is the message's list view (events.ts), whose bodies are taken from the row
 * the statement writes: serialising megabytes of text again as JSON held the event loop 275 ms for
 * a 20 MB body, and sent it to Postgres twice.
 */
function messageEventCtes(event: NewEvent): Prisma.Sql {
  const { text: _text, html: _html, content_clean: _contentClean, ...data } = event.data;
  return appendEventsCtes([{ ...event, data }], {
    after: Prisma.sql`FROM recorded`,
    dataFrom: Prisma.sql`(SELECT jsonb_build_object('text', text, 'html', html, 'content_clean', content_clean) FROM recorded)`,
  });
}

/**
 * The attachments' rows as one JSON text, rather than an array per column: pg escapes array
 * elements one by one in JavaScript, JSON.stringify is native. Inline content goes as base64. Made a thousand rows at a time, the
 * event loop taking its turn between: a mail's 10,000 attachments make 2.7 MB of JSON.
 */
async function attachmentRows(attachments: Attachment[]): Promise<string> {
  const chunks: string[] = [];
  for (let start = 0; start < attachments.length; start += ROWS_AT_ONCE) {
    if (start > 0) await setImmediate();
    const rows = attachments
      .slice(start, start + ROWS_AT_ONCE)
      .map((file) => [
        file.id,
        file.filename,
        file.contentType,
        file.size,
        file.disposition,
        file.storageBackend,
        file.storageKey,
        file.contentHash,
        file.content && Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength).toString('base64'),
      ]);
    chunks.push(JSON.stringify(rows).slice(1, -1));
  }
  return `[${chunks.join(',')}]`;
}

const ROWS_AT_ONCE = 1000;

function insertAttachments(rows: string): Prisma.Sql {
  return Prisma.sql`
      INSERT INTO attachments (id, message_id, inbox_id, thread_id, filename, content_type, size, disposition,
                               storage_backend, storage_key, content_hash, content, created_at)
      SELECT (file->>0)::uuid, recorded.id, recorded.inbox_id, recorded.thread_id, file->>1, file->>2, (file->>3)::int,
             file->>4, file->>5, file->>6, file->>7, decode(file->>8, 'base64'), recorded.created_at
        FROM recorded, json_array_elements(${rows}::json) AS file`;
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
    delivery_status: message.deliveryStatus,
    delivery_detail: message.deliveryDetail as DeliveryDetail | null,
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
