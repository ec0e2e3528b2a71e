import { z } from 'zod';
import { id, isStorableDate, pageOf, pageQuery, timestamp } from '../shared/schemas.js';
import { base64ByteLength } from './base64.js';
import { label, labelList } from './labels.js';

/** Characters of an attachment's name at most: sent, or received (webhooks/mime.ts cuts longer ones). */
export const MAX_FILENAME_LENGTH = 255;

/**
 * One address as this service sends to it: no display name, no comments, nothing a header could be
 * smuggled in, nothing a mail transport would read as another address than the one checked.
 */
const SENDABLE_ADDRESS =
  /^[^\s\p{Cc}@<>()",;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/u;

export const isSendableAddress = (address: string): boolean => address.length <= 320 && SENDABLE_ADDRESS.test(address);

const emailAddress = z
  .string()
  .trim()
  .max(320, { abort: true })
  .regex(SENDABLE_ADDRESS, { error: 'Must be an e-mail address such as name@example.com' })
  .meta({ example: 'someone@example.com' });

/** The longest subject, in characters (UTF-16 units): sent here, and stored of inbound mail (inbound-mail.ts). */
export const MAX_SUBJECT_LENGTH = 998;

// Header values must not carry line breaks or other control characters.
const headerText = (max: number) =>
  z
    .string()
    .max(max, { abort: true })
    .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain line breaks or other control characters' });

// RFC 6838 names of at most 127 characters, and RFC 2045 parameters (`; charset=utf-8`). Both cases
// are spelled out: the OpenAPI document's patterns take no `i` flag (and `iu` would let the Kelvin
// sign pass for a k).
const MIME_TYPE =
  /^[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,126}\/[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,126}(?:[ \t]*;[ \t]*[a-zA-Z0-9!#$&^_.+-]+=(?:[a-zA-Z0-9!#$&^_.+-]+|"[^"\\\p{Cc}]*"))*$/u;

const mimeType = z
  .string()
  .trim()
  .max(255, { abort: true })
  .regex(MIME_TYPE, { error: 'Must be a MIME type such as application/pdf (at most 255 characters)' })
  .meta({ example: 'text/plain; charset=utf-8' })
  // Type and subtype are case-insensitive; parameter values keep their case.
  .transform((value) => value.replace(/^[^;]+/, (type) => type.toLowerCase()));

const attachmentInput = z
  .object({
    filename: headerText(MAX_FILENAME_LENGTH).trim().min(1).meta({ example: 'report.pdf' }),
    content_type: mimeType,
    content: z
      .string()
      .refine((value) => base64ByteLength(value) !== undefined, { error: 'Must be base64-encoded content' })
      .meta({ description: 'File content, base64-encoded (line breaks allowed)' }),
  })
  .strict();

/** Addresses one field of a send may name. */
export const MAX_RECIPIENTS = 50;
const recipients = (description: string) => z.array(emailAddress).max(MAX_RECIPIENTS).meta({ description });
const ccField = recipients('Copy recipients (Cc header)').optional();
const bccField = recipients('Blind copy recipients: on the envelope only, never in any header').optional();
const labelsField = labelList.optional().meta({
  description: 'Labels of the sent message besides `sent`: lower-case slugs of at most 64 characters',
});
/** The longest body of a send, in characters. */
export const MAX_BODY_CHARS = 1_000_000;

const markdownBody = z.string().max(MAX_BODY_CHARS).meta({ description: 'Markdown, converted to HTML' });
const attachmentsField = z.array(attachmentInput).max(100).optional();

export const sendMessageBody = z
  .object({
    inbox_id: id.meta({ description: 'Inbox to send from' }),
    to: z.array(emailAddress).min(1).max(MAX_RECIPIENTS),
    cc: ccField,
    bcc: bccField,
    reply_to: z
      .union([emailAddress, z.array(emailAddress).max(10)])
      .optional()
      .transform((value) => (value === undefined ? undefined : Array.isArray(value) ? value : [value]))
      .meta({ description: 'Reply-To address(es): where replies should go' }),
    subject: headerText(MAX_SUBJECT_LENGTH).meta({ example: 'Re: Your order #1234' }),
    body: markdownBody,
    reply_to_thread_id: id.optional().meta({ description: 'Thread to reply into' }),
    attachments: attachmentsField,
    labels: labelsField,
  })
  .strict();

export type SendMessageInput = z.output<typeof sendMessageBody>;

export const replyBody = z
  .object({
    body: markdownBody,
    attachments: attachmentsField,
    reply_all: z.boolean().optional().meta({ description: 'Also to the other recipients: its other To in To, its Cc in Cc' }),
    cc: ccField,
    bcc: bccField,
    labels: labelsField,
  })
  .strict();

export type ReplyInput = z.output<typeof replyBody>;

export const forwardBody = z
  .object({
    to: z.array(emailAddress).min(1).max(MAX_RECIPIENTS),
    body: markdownBody.optional().meta({ description: 'A note above the forwarded message (Markdown)' }),
    cc: ccField,
    bcc: bccField,
    labels: labelsField,
  })
  .strict();

export type ForwardInput = z.output<typeof forwardBody>;

export const updateMessageBody = z
  .object({
    add_labels: labelList.optional().meta({ description: 'Labels to add' }),
    remove_labels: labelList.optional().meta({ description: 'Labels to remove (wins over add_labels)' }),
  })
  .strict();

export type UpdateMessageInput = z.output<typeof updateMessageBody>;

export const sendMessageHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .meta({
      description:
        'A retry with the same key (and the same body) returns the first result and sends nothing again; ' +
        '1 to 255 printable ASCII characters, such as a UUID.',
    }),
});

export const sendResultSchema = z
  .object({
    id: z.string(),
    thread_id: z.string(),
    inbox_id: z.string(),
    direction: z.literal('OUTBOUND'),
    to: z.array(z.string()),
    subject: z.string(),
    content_clean: z.string(),
    attachments: z
      .array(z.object({ id: z.string(), filename: z.string(), content_type: z.string(), size: z.number().int() }))
      .optional()
      .meta({ description: 'Present when attachments were sent' }),
    created_at: timestamp,
  })
  .meta({ id: 'SendMessageResult' });

export type SendResult = z.input<typeof sendResultSchema>;

/** A list in a query string: `labels=a,b`, `labels=a&labels=b`, or both. */
const queryList = <T extends z.ZodType<unknown, string>>(item: T, max: number) =>
  z
    .union([z.string(), z.array(z.string()).max(max)])
    .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(',')))
    .pipe(z.array(item).min(1).max(max));

const queryTime = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .refine(isStorableDate, 'Must lie between the years 1 and 9999 (UTC)')
    .optional()
    .meta({ description, example: '2026-01-31T00:00:00Z' });

/** Filters of GET /v1/messages and GET /v1/threads (a thread matches when its messages together do). */
export const messageFilters = {
  labels: queryList(label, 20)
    .optional()
    .meta({ description: 'Only messages with every one of these labels (comma-separated, or the parameter repeated)' }),
  direction: z.enum(['inbound', 'outbound']).optional(),
  from: z
    .string()
    .trim()
    .min(1)
    .max(320)
    .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain control characters' })
    .optional()
    .meta({ description: 'Sender address, or part of it, case-insensitively', example: 'example.com' }),
  after: queryTime('Only messages created after this time (exclusive)'),
  before: queryTime('Only messages created before this time (exclusive)'),
  has_attachments: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .meta({ description: 'Only messages with (`true`) or without (`false`) attachments' }),
};

export interface MessageFilters {
  labels?: string[];
  direction?: 'inbound' | 'outbound';
  from?: string;
  after?: Date;
  before?: Date;
  has_attachments?: boolean;
}

export const listMessagesQuery = z
  .object({
    inbox_id: id.optional(),
    thread_id: id.optional(),
    ...messageFilters,
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain control characters' })
      .optional()
      .meta({
        description: 'Case-insensitive text to find in subject, text body, sender address or attachment filenames',
        example: 'invoice',
      }),
    ...pageQuery,
  })
  .strict()
  .refine((query) => query.inbox_id !== undefined || query.thread_id !== undefined, {
    error: 'inbox_id or thread_id is required',
    path: ['inbox_id'],
  });

export const messageParams = z.object({ message_id: id });

const deliveryDetailSchema = z
  .object({
    provider: z.string().meta({ description: 'The transport: local, smtp, mailgun, sendgrid or ses', example: 'ses' }),
    event: z.string().meta({
      description:
        "The provider's name of the event last applied (SES `Bounce`, Mailgun `failed`, SendGrid `spamreport`), or `send`",
      example: 'Bounce',
    }),
    recipient: z.string().nullable().meta({ description: 'The recipient the event is about', example: 'jane@example.com' }),
    reason: z.string().nullable().meta({
      description: "The provider's reason or diagnostic (bounce type, SMTP reply)",
      example: 'Permanent/General: smtp; 550 5.1.1 user unknown',
    }),
    timestamp: timestamp.meta({ description: 'When the provider says it happened' }),
  })
  .meta({ id: 'DeliveryDetail' });

export const messageSchema = z
  .object({
    id: z.string(),
    thread_id: z.string(),
    inbox_id: z.string(),
    direction: z.enum(['inbound', 'outbound']),
    provider_message_id: z.string(),
    subject: z.string(),
    from_address: z.string(),
    to_addresses: z.array(z.string()),
    cc_addresses: z.array(z.string()).nullable(),
    bcc_addresses: z.array(z.string()).nullable(),
    reply_to_addresses: z.array(z.string()).nullable(),
    text: z.string(),
    html: z.string(),
    content_clean: z.string(),
    timestamp,
    labels: z.array(z.string()),
    preview: z.string(),
    size: z.number().int(),
    in_reply_to: z.string().nullable(),
    references: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    delivery_status: z
      .enum(['sent', 'delivered', 'bounced', 'complained', 'failed'])
      .nullable()
      .meta({
        description:
          'Outbound mail: `sent` once the provider took it, then what its delivery events report (`delivered`, `bounced`, ' +
          '`complained`; `failed` when the transport refused it or the provider dropped it). Only ever moves to a worse ' +
          'status (sent < delivered < bounced = failed < complained). Null for inbound mail and while sending.',
      }),
    delivery_detail: deliveryDetailSchema.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Message' });

export type MessageResponse = z.input<typeof messageSchema>;

const searchItemSchema = messageSchema
  .pick({
    id: true,
    thread_id: true,
    inbox_id: true,
    subject: true,
    from_address: true,
    text: true,
    content_clean: true,
    created_at: true,
  })
  .meta({ id: 'MessageSearchItem' });

export type SearchItem = z.input<typeof searchItemSchema>;

export const messagePage = pageOf(z.union([messageSchema, searchItemSchema])).meta({
  id: 'MessagePage',
  description: 'Messages newest first; with `q`, items carry the search subset of fields',
});
