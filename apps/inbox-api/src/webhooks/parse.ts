import { BadRequestError, ServiceUnavailableError } from '@repo/errors';
import type { AttachmentFile } from '../messages/attachments.js';
import { type ContentPool, ContentTooComplexError, FALLBACK_CONTENT_CHARS } from '../messages/content/index.js';
import type { InboundMail } from '../messages/inbound-mail.js';
import { hasHeader, mailOf, noHeaders, type ParsedMail } from './mime.js';

/*
 * Where received mail is parsed: in the content pool (src/messages/content/pool.ts), off the event
 * loop, with postal-mime (mime.ts). The event loop only moves the bytes. A source that is no mail
 * at all is refused (400); a mail that cannot be parsed (past the pool's time limit, its worker
 * stopped, or a structure postal-mime refuses) is stored as it came rather than refused, which
 * would make the provider drop it or retry it forever: see unparsedMail.
 */

/** What `metadata.mime` says of a mail stored unparsed. */
export interface MimeFallback {
  fallback: 'timeout' | 'error';
  /** Why it could not be parsed. */
  detail: string;
  /** The attachment holding the whole source. */
  original_filename: string;
}

export interface ReadMail {
  mail: InboundMail;
  /** Set when the source could not be parsed and was stored as it came. */
  fallback?: MimeFallback;
}

/** The attachment an unparsed mail's whole source is kept in. */
export const ORIGINAL_FILENAME = 'original.eml';
/** The header block of an unparsed source is read from its first bytes, at most this many. */
const FALLBACK_HEADER_BYTES = 64 * 1024;

/** 400 when `raw` is no mail at all (no header); broken headers are read as well as they can be. */
export async function readMail(pool: ContentPool, raw: Buffer): Promise<ReadMail> {
  if (!hasHeader(raw)) throw new BadRequestError('The message is not a MIME e-mail: it has no header');
  try {
    return { mail: inboundMail(await pool.parseMail(raw)) };
  } catch (error) {
    if (error instanceof ServiceUnavailableError) throw error; // shutting down: the provider retries
    return unparsedMail(pool, raw, error);
  }
}

/** A header block alone, read as mime.ts's parseHeaders reads it; nothing when it cannot be read in time. */
export async function readHeaders(pool: ContentPool, block: string) {
  try {
    return await pool.parseHeaders(block);
  } catch (error) {
    if (error instanceof ServiceUnavailableError) throw error;
    return noHeaders();
  }
}

/**
 * A mail that could not be parsed, stored as it came: its header block (from the first
 * FALLBACK_HEADER_BYTES) gives the addresses, subject, Message-ID and date; the text is the source
 * after the header block, cut at FALLBACK_CONTENT_CHARS bytes; the whole source is the attachment
 * ORIGINAL_FILENAME (message/rfc822), so that nothing of it is lost.
 */
async function unparsedMail(pool: ContentPool, raw: Buffer, error: unknown): Promise<ReadMail> {
  const headerEnd = headerBlockEnd(raw.subarray(0, FALLBACK_HEADER_BYTES));
  const headers = await readHeaders(pool, raw.toString('utf8', 0, headerEnd));
  const text = raw.toString('utf8', headerEnd, headerEnd + FALLBACK_CONTENT_CHARS);
  const original: AttachmentFile = {
    filename: ORIGINAL_FILENAME,
    contentType: 'message/rfc822',
    content: raw,
    disposition: 'attachment',
  };
  const mail = inboundMail(mailOf({ ...headers, text, html: undefined, attachments: [] }, raw.length));
  return {
    mail: { ...mail, attachments: [original] },
    fallback: {
      fallback: error instanceof ContentTooComplexError ? 'timeout' : 'error',
      detail: error instanceof Error ? error.message : String(error),
      original_filename: ORIGINAL_FILENAME,
    },
  };
}

/** Where the header block of `start` ends: after its first blank line, or after its last whole line. */
function headerBlockEnd(start: Buffer): number {
  const blank = [start.indexOf('\r\n\r\n'), start.indexOf('\n\n')].filter((at) => at >= 0);
  if (blank.length > 0) {
    const at = Math.min(...blank);
    return at + (start[at] === 0x0d ? 4 : 2);
  }
  return start.lastIndexOf('\n') + 1 || start.length;
}

/** A parsed mail as the rest of the service takes it: the attachments' bytes as Buffers (views, not copies). */
function inboundMail(parsed: ParsedMail): InboundMail {
  return {
    ...parsed,
    attachments: parsed.attachments.map((attachment): AttachmentFile => ({
      ...attachment,
      content: Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength),
    })),
  };
}
