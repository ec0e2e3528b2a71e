import PostalMime, { type Address, addressParser, type Attachment, type Email } from 'postal-mime';
import type { InboundMail } from '../messages/inbound-mail.js';
import { MAX_FILENAME_LENGTH } from '../messages/schemas.js';
import { MAX_SUBJECT_SOURCE_LENGTH } from '../threads/threading.js';

/*
 * Raw RFC 5322 mail (SendGrid's raw mode, Mailgun's body-mime, SES's content or S3 object) to the
 * mail the service stores, through postal-mime: any charset, RFC 2047 words, nested multiparts,
 * inline images as attachments with disposition `inline`. parseMail and parseHeaders run in the
 * content workers (src/messages/content/worker.ts; parse.ts sends them there), so this module
 * imports npm packages only: it loads the same in a worker from TypeScript sources and from dist/.
 *
 * postal-mime is patched (patches/postal-mime@4.0.0.patch): as published, it joined the lines of
 * a part through a Blob of one piece per line, about 8 µs a line in Node; and it read text in a
 * charset no decoder knows (`unknown-8bit`) as windows-1252, UTF-8 text too.
 */

/**
 * MIME sources within these are parsed; deeper nesting or more header bytes (all parts' together:
 * the headers of 10,000 attachments come to about 1.5 MB) is refused as a parse failure.
 */
const PARSE_LIMITS = { maxNestingDepth: 64, maxHeadersSize: 4 * 1024 * 1024, maxRfc822NestingDepth: 4 };
/**
 * A source with more lines that may start a part (lines starting with `--`) is refused as a parse
 * failure: each part costs postal-mime tens of microseconds (bench/content.ts), and 1 MB holds
 * 90,000 parts without headers. Real mail has a few dozen; 10,000 attachments fit.
 */
export const MAX_MIME_PARTS = 20_000;

/** An attachment as it crosses threads: its bytes are handed over, not copied (parse.ts makes them a Buffer again). */
export interface ParsedAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
  disposition: 'inline' | 'attachment';
}

/** The InboundMail that a raw mail makes, as plain data that crosses threads (bytes, not Buffers). */
export interface ParsedMail extends Omit<InboundMail, 'attachments'> {
  attachments: ParsedAttachment[];
}

/** Whether `raw` starts like a mail: a header line within its first 64 KB. */
export function hasHeader(raw: Uint8Array): boolean {
  const start = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, 64 * 1024)).toString('latin1');
  return /^[\t ]*[!-9;-~]+[\t ]*:/m.test(start);
}

/** Rejects, with the reason, a source it will not read (parts, nesting or headers beyond the limits above). */
export async function parseMail(raw: Uint8Array): Promise<ParsedMail> {
  if (partStarts(raw, MAX_MIME_PARTS) > MAX_MIME_PARTS) throw new Error(`The mail has more than ${MAX_MIME_PARTS} MIME parts`);
  return mailOf(await PostalMime.parse(raw, { ...PARSE_LIMITS, attachmentEncoding: 'arraybuffer' }), raw.byteLength);
}

/** How many lines of `raw` start with `--` (each part of a multipart starts with one), counted up to `atMost + 1`. */
function partStarts(raw: Uint8Array, atMost: number): number {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let count = 0;
  for (let at = bytes.indexOf('\n--'); at >= 0 && count <= atMost; at = bytes.indexOf('\n--', at + 3)) count++;
  return count;
}

/** A header block alone (SendGrid's parsed mode sends one beside the fields), read for Message-ID, threading and Cc. */
export async function parseHeaders(headers: string): Promise<Email> {
  try {
    return await PostalMime.parse(`${headers.replace(/\r?\n?$/, '')}\r\n\r\n`, PARSE_LIMITS);
  } catch {
    return noHeaders();
  }
}

/** What parseHeaders answers for a block it cannot read. */
export function noHeaders(): Email {
  return { headers: [], headerLines: [], attachments: [] };
}

/** The mail stored for a parsed source (`email`; its text and attachments may be left out). */
export function mailOf(email: Email, size: number): ParsedMail {
  return {
    from: senderOf(email),
    to: addresses(email.to),
    cc: addresses(email.cc),
    replyTo: addresses(email.replyTo),
    subject: headerText(email.subject ?? ''),
    text: bodyText(email.text ?? ''),
    html: bodyText(email.html ?? ''),
    messageId: email.messageId,
    inReplyTo: email.inReplyTo,
    references: email.references,
    date: email.date ? new Date(email.date) : undefined,
    size,
    attachments: email.attachments.map(attachmentFile),
  };
}

/** Every mailbox address of a header, groups unwrapped, lower-cased, without duplicates. */
export function addresses(list: Address[] | Address | undefined): string[] {
  if (!list) return [];
  const mailboxes = (Array.isArray(list) ? list : [list]).flatMap((address) => address.group ?? [address]);
  return [...new Set(mailboxes.map((mailbox) => storable(mailbox.address.trim().toLowerCase())).filter(isAddress))];
}

/**
 * The sender's address: the first mailbox of From that has one. postal-mime keeps only the first
 * entry of From, which is a name alone when an unquoted display name has a comma in it
 * (`From: Norton I., Emperor <norton@example.com>`); the whole header is read again for that.
 */
function senderOf(email: Email): string {
  const header = email.headers.find((line) => line.key === 'from')?.value;
  const fromHeader = header === undefined ? [] : addresses(addressParser(header));
  return fromHeader[0] ?? addresses(email.from)[0] ?? addresses(email.sender)[0] ?? storable(email.returnPath ?? '');
}

/**
 * A body as stored: storable, with line ends as LF whatever the mail or the provider used. Split
 * and joined rather than `replace(/\r\n?/g, '\n')`, which built its result a match at a time: ten
 * times slower on many short lines (3 s for 20 MB of them, against 0.3).
 */
export function bodyText(value: string): string {
  const text = storable(value);
  const crlfGone = text.includes('\r\n') ? text.split('\r\n').join('\n') : text;
  return crlfGone.includes('\r') ? crlfGone.split('\r').join('\n') : crlfGone;
}

/** A received subject as header text, of its first MAX_SUBJECT_SOURCE_LENGTH characters (what is stored comes from far less). */
export function subjectText(value: string): string {
  return headerText(value.slice(0, MAX_SUBJECT_SOURCE_LENGTH));
}

/** A header's text on one line: folded or encoded line breaks and other control characters become spaces. */
export function headerText(value: string): string {
  return storable(value)
    .replace(/[\p{Cc}]+/gu, ' ')
    .trim();
}

/** The longest ending kept as an extension when a name is cut. */
const MAX_EXTENSION_LENGTH = 16;

/**
 * An attachment's name as stored: header text of at most MAX_FILENAME_LENGTH characters, cut
 * before its extension when longer (a name of 10 KB made a Content-Disposition of 20 KB, past
 * what HTTP clients read), never inside a surrogate pair. Pure.
 */
export function filenameText(value: string): string {
  const name = headerText(value);
  if (name.length <= MAX_FILENAME_LENGTH) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= MAX_EXTENSION_LENGTH ? name.slice(dot) : '';
  const stem = name.slice(0, MAX_FILENAME_LENGTH - extension.length).replace(/[\ud800-\udbff]$/, '');
  return stem + extension;
}

const isAddress = (value: string) => /^[^\s@]+@[^\s@]+$/.test(value);

function attachmentFile(attachment: Attachment, index: number): ParsedAttachment {
  const content = attachment.content;
  return {
    filename: filenameText(attachment.filename ?? '') || defaultFilename(attachment.mimeType, index),
    contentType: attachment.mimeType || 'application/octet-stream',
    content:
      typeof content === 'string'
        ? new Uint8Array(Buffer.from(content, 'base64')) // a copy: a small Buffer lies in a shared pool
        : content instanceof ArrayBuffer
          ? new Uint8Array(content)
          : new Uint8Array(content.buffer, content.byteOffset, content.byteLength),
    // An image the HTML shows by its Content-ID stays inline, whatever the part said.
    disposition: attachment.related || attachment.disposition === 'inline' ? 'inline' : 'attachment',
  };
}

/** A name for a part that has none: `part-2.png`. */
function defaultFilename(mimeType: string, index: number): string {
  const subtype = /^[a-z]+\/([a-z0-9.+-]+)$/i.exec(mimeType)?.[1]?.replace(/^x-|\+.*$/g, '');
  return `part-${index + 1}${subtype ? `.${subtype.slice(0, 10)}` : ''}`;
}

/**
 * Text as Postgres can store it: mail may carry NUL bytes and broken UTF-16 (lone surrogates),
 * which the database refuses. Received mail is stored, not refused: NUL goes, surrogates become U+FFFD.
 */
export function storable(text: string): string {
  return text.replaceAll('\0', '').toWellFormed();
}
