import PostalMime, { type Address, addressParser, type Attachment, type Email } from 'postal-mime';
import { BadRequestError } from '@repo/errors';
import type { AttachmentFile } from '../messages/attachments.js';
import type { InboundMail } from '../messages/inbound-mail.js';

/*
 * Raw RFC 5322 mail (SendGrid's raw mode, Mailgun's body-mime, SES's content or S3 object) to the
 * mail the service stores, through postal-mime: any charset, RFC 2047 words, nested multiparts,
 * inline images as attachments with disposition `inline`.
 */

/** MIME sources within these are parsed; deeper nesting is refused as a parse failure. */
const PARSE_LIMITS = { maxNestingDepth: 64, maxHeadersSize: 1024 * 1024, maxRfc822NestingDepth: 4 };

/** 400 when `raw` is no mail at all (no header, nothing to read); broken headers are read as well as they can be. */
export async function parseMime(raw: Buffer | string): Promise<InboundMail> {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (!/^[\t ]*[!-9;-~]+[\t ]*:/m.test(bytes.subarray(0, 64 * 1024).toString('latin1'))) {
    throw new BadRequestError('The message is not a MIME e-mail: it has no header');
  }
  let email: Email;
  try {
    email = await PostalMime.parse(bytes, { ...PARSE_LIMITS, attachmentEncoding: 'arraybuffer' });
  } catch (error) {
    throw new BadRequestError('The message could not be parsed as MIME', { reason: (error as Error).message });
  }
  return mailOf(email, bytes.length);
}

/** A header block alone (SendGrid's parsed mode sends one beside the fields), read for Message-ID, threading and Cc. */
export async function parseHeaders(headers: string): Promise<Email> {
  try {
    return await PostalMime.parse(`${headers.replace(/\r?\n?$/, '')}\r\n\r\n`, PARSE_LIMITS);
  } catch {
    return { headers: [], headerLines: [], attachments: [] };
  }
}

function mailOf(email: Email, size: number): InboundMail {
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

/** A body as stored: storable, with line ends as LF whatever the mail or the provider used. */
export function bodyText(value: string): string {
  return storable(value).replace(/\r\n?/g, '\n');
}

/** A header's text on one line: folded or encoded line breaks and other control characters become spaces. */
export function headerText(value: string): string {
  return storable(value)
    .replace(/[\p{Cc}]+/gu, ' ')
    .trim();
}

const isAddress = (value: string) => /^[^\s@]+@[^\s@]+$/.test(value);

function attachmentFile(attachment: Attachment, index: number): AttachmentFile {
  const content = attachment.content;
  return {
    filename: headerText(attachment.filename ?? '') || defaultFilename(attachment.mimeType, index),
    contentType: attachment.mimeType || 'application/octet-stream',
    content: typeof content === 'string' ? Buffer.from(content, 'base64') : Buffer.from(content as ArrayBuffer),
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
