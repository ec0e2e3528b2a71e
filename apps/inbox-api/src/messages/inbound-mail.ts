import { createHash } from 'node:crypto';
import { describeStored } from '@repo/storage';
import type { AttachmentFile } from './attachments.js';
import { parseMessageIds, subjectKey } from '../threads/threading.js';
import { prefixOf } from '../shared/text.js';
import { MAX_SUBJECT_LENGTH } from './schemas.js';

/*
 * Inbound mail as a provider hands it over (InboundMail), and as it is stored (StorableMail):
 * header values that Postgres can store and its btree indexes can hold, whatever the mail
 * carried (NUL bytes, ids and subjects of any length, a Date that is no date). storableMail is
 * applied once per delivery, before anything is looked up or written (webhooks/ingest.ts, and
 * local delivery); the rules are the pure functions below.
 */

/** An e-mail as it arrives, from a provider webhook or from local delivery. */
export interface InboundMail {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  text: string;
  html: string;
  /** Message-ID header; one is derived from the content when the mail has none (derivedMessageId). */
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  date?: Date;
  /** Size of the MIME source in bytes. */
  size: number;
  attachments: AttachmentFile[];
}

/** The mail as it is stored and threaded. */
export interface StorableMail extends Omit<InboundMail, 'subject' | 'messageId' | 'inReplyTo' | 'references' | 'date'> {
  /** At most MAX_SUBJECT_LENGTH characters. */
  subject: string;
  /** threading.ts's subjectKey of the whole subject, before it was capped. */
  subjectKey: string;
  /** Cleaned and capped (storedMessageId); derived from the content when the mail has none. */
  messageId: string;
  inReplyTo: string | null;
  /** Oldest first, at most MAX_STORED_REFERENCES. */
  references: string[];
  /** The Date header, or the time of receipt when it is absent, unreadable or more than a day ahead. */
  date: Date;
}

/**
 * A stored Message-ID (In-Reply-To and References ids alike) is at most this many bytes of UTF-8,
 * angle brackets included: RFC 5322's longest line, and well within a btree row (~2.7 KB) beside
 * the inbox and direction of the messages' unique index.
 */
export const MAX_MESSAGE_ID_BYTES = 998;
/** A stored References list keeps its first id (the thread's root) and the newest, this many in all. */
export const MAX_STORED_REFERENCES = 100;
/** A Date header further ahead than this is not believed. */
const MAX_DATE_AHEAD_MS = 24 * 3600 * 1000;
/**
 * No mail is older than e-mail: a Date before 1970 is a clock or a client gone wrong, and one far
 * enough back (`-100000-01-01`, which JavaScript reads) is outside what Postgres can store.
 */
const EARLIEST_DATE_MS = Date.UTC(1970, 0, 1);

/**
 * The mail as it is stored, received at `receivedAt`: ids cleaned and capped (a Message-ID derived
 * from the content when there is none to store), the subject capped and keyed, the Date believed
 * or replaced. Pure (asynchronous only because a large mail's content is hashed off the event loop).
 */
export async function storableMail(mail: InboundMail, options: { domain: string; receivedAt: Date }): Promise<StorableMail> {
  const date = headerDate(mail.date, options.receivedAt);
  const references = storedMessageIds(mail.references);
  return {
    ...mail,
    subject: storedSubject(mail.subject),
    subjectKey: subjectKey(mail.subject),
    messageId: storedMessageId(mail.messageId) ?? (await derivedMessageId(mail, options.domain)),
    inReplyTo: storedMessageId(mail.inReplyTo) ?? null,
    references:
      references.length > MAX_STORED_REFERENCES
        ? [references[0]!, ...references.slice(-(MAX_STORED_REFERENCES - 1))]
        : references,
    date: date ?? options.receivedAt,
    attachments: mail.attachments.map((attachment) => ({
      ...attachment,
      contentType: storedContentType(attachment.contentType),
    })),
  };
}

/** Longest content type kept (a real one is a few dozen characters, parameters aside). */
const MAX_CONTENT_TYPE_LENGTH = 255;

/** An attachment's content type as stored: control characters (NUL among them) gone, capped; octet-stream when nothing is left. */
export function storedContentType(contentType: string): string {
  const cleaned = withoutControls(contentType).trim().slice(0, MAX_CONTENT_TYPE_LENGTH).toWellFormed();
  return cleaned || 'application/octet-stream';
}

/**
 * The ids of a Message-ID, In-Reply-To or References header, in order, once each: control
 * characters (NUL included) removed, as other header text is cleaned, then each capped.
 */
export function storedMessageIds(header: string | undefined): string[] {
  if (header === undefined) return [];
  // parseMessageIds leaves each id once; capped, distinct ids stay distinct (their digests differ).
  return parseMessageIds(withoutControls(header)).map(capMessageId);
}

/**
 * The header's first id; an id without its angle brackets (`Message-ID: abc@example.com`) gets
 * them, so that the redelivery of such a mail is recognised too. Undefined when there is none.
 */
export function storedMessageId(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const [first] = storedMessageIds(header);
  if (first !== undefined) return first;
  const bare = /[^\s<>]+/.exec(withoutControls(header))?.[0];
  return bare === undefined ? undefined : capMessageId(`<${bare}>`);
}

/**
 * An id over MAX_MESSAGE_ID_BYTES keeps its start, followed by the SHA-256 of the whole id: the
 * same id always gives the same stored id (a reply naming it threads), and two long ids that
 * start alike stay apart.
 */
export function capMessageId(id: string): string {
  // A UTF-16 unit takes at most 3 bytes of UTF-8: most ids need no counting.
  if (id.length * 3 <= MAX_MESSAGE_ID_BYTES || Buffer.byteLength(id) <= MAX_MESSAGE_ID_BYTES) return id;
  const digest = createHash('sha256').update(id).digest('hex');
  const room = MAX_MESSAGE_ID_BYTES - '<'.length - '~'.length - digest.length - '>'.length;
  return `<${utf8Prefix(id.slice(1, -1), room)}~${digest}>`;
}

/** At most MAX_SUBJECT_LENGTH characters, a character outside the BMP never cut in two. */
export function storedSubject(subject: string): string {
  return prefixOf(subject, MAX_SUBJECT_LENGTH);
}

/** The Date header when it is one (from 1970, and not more than a day ahead: a clock gone wrong), else undefined. */
export function headerDate(date: Date | undefined, receivedAt: Date): Date | undefined {
  if (date === undefined || Number.isNaN(date.getTime()) || date.getTime() < EARLIEST_DATE_MS) return undefined;
  return date.getTime() > receivedAt.getTime() + MAX_DATE_AHEAD_MS ? undefined : date;
}

/**
 * A stand-in Message-ID for mail that has none, derived from its content, so that a provider's
 * redelivery of it is still recognised as the same message. The mail's own Date counts when it is
 * one; the time of receipt never does (a redelivery comes later).
 */
export async function derivedMessageId(mail: InboundMail, domain: string): Promise<string> {
  const date = mail.date === undefined || Number.isNaN(mail.date.getTime()) ? '' : mail.date.toISOString();
  const NUL = Buffer.from([0]);
  const parts = [mail.from, mail.to.join(','), mail.subject, date, mail.text, mail.html].flatMap((part) => [
    Buffer.from(part),
    NUL,
  ]);
  // Hashed as one body: a large one (a 20 MB attachment, a long text) on the thread pool.
  const { sha256 } = await describeStored(Buffer.concat([...parts, ...mail.attachments.map((attachment) => attachment.content)]));
  return `<${sha256.slice(0, 40)}.no-message-id@${domain}>`;
}

/** Control characters (C0 and C1: NUL, line breaks of a folded header…) removed; broken UTF-16 made whole, as Postgres needs it. */
function withoutControls(text: string): string {
  // The C0 and C1 ranges as a class: two to four times faster than \p{Cc} on a megabyte of them.
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, '').toWellFormed();
}

/** The longest start of `text` that takes at most `maxBytes` in UTF-8, no character cut. */
function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}
