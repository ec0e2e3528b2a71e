import type { Email } from 'postal-mime';
import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import type { AttachmentFile } from '../../messages/attachments.js';
import type { ContentPool } from '../../messages/content/index.js';
import type { InboundMail } from '../../messages/inbound-mail.js';
import { fieldBodyText, fieldText, type WebhookBody } from '../body.js';
import type { InboundDelivery } from '../delivery.js';
import { addresses, filenameText, noHeaders, storable, subjectText } from '../mime.js';
import { readHeaders, readMail } from '../parse.js';
import type { MailgunSignature } from '../verify.js';
import { firstWord, score, verdict } from '../verdicts.js';

/*
 * Mailgun routes (https://documentation.mailgun.com/docs/mailgun/user-manual/receive-forward-store/):
 * `forward()` posts the parsed message as multipart/form-data (or urlencoded without
 * attachments): `body-plain`, `body-html`, `from`, `subject`, `recipient`, `message-headers` (a
 * JSON list of [name, value]), files `attachment-1..N`, and `timestamp`/`token`/`signature`. A
 * route URL ending in `mime` gets the whole message in `body-mime` instead of the parsed fields.
 * JSON bodies with the same names are taken too, the signature also as `{"signature": {...}}`.
 */

const messageHeaders = z.array(z.tuple([z.string(), z.string()]));

/**
 * The headers whose fields of the same name (`from`, `Message-Id`...) stand in for them, each with
 * when it does: parsedMail takes a field only where the message's own header gives nothing.
 */
const FIELD_FALLBACKS: [name: string, lacks: (headers: Email) => boolean][] = [
  ['From', (headers) => addresses(headers.from).length === 0],
  ['To', (headers) => addresses(headers.to).length === 0],
  ['Cc', (headers) => addresses(headers.cc).length === 0],
  ['Message-Id', (headers) => headers.messageId === undefined],
  ['In-Reply-To', (headers) => headers.inReplyTo === undefined],
  ['References', (headers) => headers.references === undefined],
  ['Date', (headers) => headers.date === undefined],
];
const nestedSignature = z.object({ timestamp: z.coerce.string(), token: z.string(), signature: z.string() });

/** The request's signature fields, top-level or nested; undefined when any is missing. */
export function mailgunSignatureOf(body: WebhookBody): MailgunSignature | undefined {
  const nested = nestedSignature.safeParse((body.json as { signature?: unknown } | undefined)?.signature);
  if (nested.success) return nested.data;
  const [timestamp, token, signature] = ['timestamp', 'token', 'signature'].map((name) => fieldText(body, name));
  return timestamp && token && signature ? { timestamp, token, signature } : undefined;
}

export async function mailgunDelivery(body: WebhookBody, content: ContentPool): Promise<InboundDelivery> {
  const headerList = headerListOf(body);
  const header = (name: string) => headerList.find(([key]) => key.toLowerCase() === name)?.[1] ?? fieldText(body, name);
  const mime = body.fields.get('body-mime');
  const { mail, fallback } = mime ? await readMail(content, mime) : { mail: await parsedMail(body, headerList, content) };
  return {
    provider: 'mailgun',
    reference: mailgunSignatureOf(body)?.token,
    mail,
    mimeFallback: fallback,
    recipients: (fieldText(body, 'recipient') ?? '')
      .split(',')
      .map((address) => address.trim())
      .filter(Boolean),
    verdicts: {
      spam: header('x-mailgun-sflag')?.trim().toLowerCase() === 'yes' ? 'fail' : header('x-mailgun-sflag') ? 'pass' : undefined,
      spamScore: score(header('x-mailgun-sscore')),
      spf: firstWord(header('x-mailgun-spf')),
      dkim: verdict(header('x-mailgun-dkim-check-result')),
    },
  };
}

function headerListOf(body: WebhookBody): [string, string][] {
  const json = fieldText(body, 'message-headers');
  if (json === undefined) return [];
  try {
    const parsed = messageHeaders.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

async function parsedMail(body: WebhookBody, headerList: [string, string][], content: ContentPool): Promise<InboundMail> {
  const text = (name: string) => {
    const value = fieldText(body, name);
    return value === undefined ? undefined : storable(value);
  };
  if (headerList.length === 0 && text('from') === undefined) {
    throw new BadRequestError(
      'Neither the MIME message (`body-mime`) nor its parsed fields (`message-headers`, `from`) are in the request',
    );
  }
  // The message's own headers, as Mailgun lists them; the fields of the same names are the fallback.
  const headerBlock = headerList
    .filter(([name]) => /^(from|to|cc|reply-to|subject|date|message-id|in-reply-to|references)$/i.test(name))
    .map(([name, value]) => `${name}: ${value.replace(/[\r\n]+/g, ' ')}`)
    .join('\r\n');
  const headers = await readHeaders(content, headerBlock);
  // Only the fields that stand in for something the headers lack are read (most mail: none).
  const fieldBlock = FIELD_FALLBACKS.flatMap(([name, lacks]) => {
    const value = lacks(headers) ? (text(name) ?? text(name.toLowerCase())) : undefined;
    return value ? [`${name}: ${value.replace(/[\r\n]+/g, ' ')}`] : [];
  }).join('\r\n');
  const fields = fieldBlock ? await readHeaders(content, fieldBlock) : noHeaders();
  const inlineFiles = new Set(Object.values(contentIdMap(body)));
  const attachments = body.files.map((file): AttachmentFile => ({
    filename: filenameText(file.filename) || file.field,
    contentType: file.contentType,
    content: file.content,
    disposition: inlineFiles.has(file.field) ? 'inline' : 'attachment',
  }));
  const html = await fieldBodyText(body, 'body-html');
  const plain = await fieldBodyText(body, 'body-plain');
  const pick = <T>(fromHeaders: T | undefined, fromFields: T | undefined, empty: (value: T) => boolean) =>
    fromHeaders !== undefined && !empty(fromHeaders) ? fromHeaders : fromFields;
  const none = (list: string[]) => list.length === 0;
  const date = headers.date ?? fields.date;
  return {
    from: pick(addresses(headers.from), addresses(fields.from), none)?.[0] ?? '',
    to: pick(addresses(headers.to), addresses(fields.to), none) ?? [],
    cc: pick(addresses(headers.cc), addresses(fields.cc), none) ?? [],
    replyTo: addresses(headers.replyTo),
    subject: subjectText(fieldText(body, 'subject') ?? headers.subject ?? ''),
    text: plain,
    html,
    messageId: headers.messageId ?? fields.messageId,
    inReplyTo: headers.inReplyTo ?? fields.inReplyTo,
    references: headers.references ?? fields.references,
    date: date ? new Date(date) : undefined,
    size: Buffer.byteLength(plain) + Buffer.byteLength(html) + attachments.reduce((sum, file) => sum + file.content.length, 0),
    attachments,
  };
}

const contentIds = z.record(z.string(), z.string());

/** `content-id-map`: `{"<cid>": "attachment-1"}`, the files the HTML shows inline. */
function contentIdMap(body: WebhookBody): Record<string, string> {
  const json = fieldText(body, 'content-id-map');
  if (json === undefined) return {};
  try {
    const parsed = contentIds.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}
