import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import type { AttachmentFile } from '../../messages/attachments.js';
import type { ContentPool } from '../../messages/content/index.js';
import type { InboundMail } from '../../messages/inbound-mail.js';
import { decodeText, fieldBodyText, fieldText, type WebhookBody } from '../body.js';
import type { InboundDelivery } from '../delivery.js';
import { addresses, filenameText, storable, subjectText } from '../mime.js';
import { readHeaders, readMail } from '../parse.js';
import { score, sendgridDkim, verdict } from '../verdicts.js';

/*
 * SendGrid Inbound Parse (https://www.twilio.com/docs/sendgrid/for-developers/parsing-email/setting-up-the-inbound-parse-webhook):
 * multipart/form-data in one of two modes. "Send raw" puts the whole MIME message in `email`;
 * the default mode posts parsed fields (`headers`, `from`, `to`, `cc`, `subject`, `text`, `html`,
 * each in the charset the `charsets` field names) and the attachments as files `attachment1..N`
 * described by `attachment-info`. Both carry `envelope`, `SPF`, `dkim` and `spam_score`.
 */

const envelope = z.object({ to: z.array(z.string()).default([]), from: z.string().nullish() }).partial();
const charsets = z.record(z.string(), z.string());
const attachmentInfo = z.record(
  z.string(),
  z.object({
    filename: z.string().optional(),
    name: z.string().optional(),
    type: z.string().optional(),
    'content-id': z.string().optional(),
  }),
);

export async function sendgridDelivery(body: WebhookBody, content: ContentPool): Promise<InboundDelivery> {
  const raw = body.fields.get('email');
  const { mail, fallback } = raw ? await readMail(content, raw) : { mail: await parsedFieldsMail(body, content) };
  return {
    provider: 'sendgrid',
    mail,
    mimeFallback: fallback,
    recipients: jsonField(body, 'envelope', envelope)?.to ?? [],
    verdicts: {
      spf: verdict(fieldText(body, 'SPF')),
      dkim: sendgridDkim(fieldText(body, 'dkim')),
      spamScore: score(fieldText(body, 'spam_score')),
    },
  };
}

async function parsedFieldsMail(body: WebhookBody, content: ContentPool): Promise<InboundMail> {
  const encodings = jsonField(body, 'charsets', charsets) ?? {};
  const decoded = (name: string) => {
    const value = body.fields.get(name);
    return value === undefined ? undefined : decodeText(value, encodings[name] ?? 'utf-8');
  };
  const text = (name: string) => {
    const value = decoded(name);
    return value === undefined ? undefined : storable(value);
  };
  if (text('from') === undefined && text('headers') === undefined) {
    throw new BadRequestError('Neither the raw message (`email`) nor its parsed fields (`headers`, `from`) are in the request');
  }
  // The header block, as the mail carried it (names quoted, RFC 2047 words), is read first: it
  // also gives what the fields leave out (Message-ID, threading, Reply-To, Date). The fields are
  // the fallback for a block without an address header.
  const headers = await readHeaders(content, text('headers') ?? '');
  const fields = await readHeaders(content, `From: ${text('from') ?? ''}\r\nTo: ${text('to') ?? ''}\r\nCc: ${text('cc') ?? ''}`);
  const either = (key: 'from' | 'to' | 'cc') => {
    const fromHeaders = addresses(headers[key]);
    return fromHeaders.length > 0 ? fromHeaders : addresses(fields[key]);
  };
  const info = jsonField(body, 'attachment-info', attachmentInfo) ?? {};
  const attachments = body.files.map((file): AttachmentFile => {
    const described = info[file.field];
    return {
      filename: filenameText(described?.filename ?? described?.name ?? file.filename) || file.field,
      contentType: described?.type ?? file.contentType,
      content: file.content,
      disposition: described?.['content-id'] ? 'inline' : 'attachment',
    };
  });
  const html = await fieldBodyText(body, 'html', encodings.html);
  const plain = await fieldBodyText(body, 'text', encodings.text);
  return {
    from: either('from')[0] ?? '',
    to: either('to'),
    cc: either('cc'),
    replyTo: addresses(headers.replyTo),
    subject: subjectText(decoded('subject') ?? headers.subject ?? ''),
    text: plain,
    html,
    messageId: headers.messageId,
    inReplyTo: headers.inReplyTo,
    references: headers.references,
    date: headers.date ? new Date(headers.date) : undefined,
    size: Buffer.byteLength(plain) + Buffer.byteLength(html) + attachments.reduce((sum, file) => sum + file.content.length, 0),
    attachments,
  };
}

/** A JSON field checked against its schema; absent or malformed fields are left out, as SendGrid omits what it lacks. */
function jsonField<T extends z.ZodType>(body: WebhookBody, name: string, schema: T): z.output<T> | undefined {
  const value = fieldText(body, name);
  if (value === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
