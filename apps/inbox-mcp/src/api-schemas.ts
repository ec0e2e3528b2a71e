/**
 * What inbox-api answers, as this server relies on it (apps/inbox-api's schemas.ts files are the
 * source). Responses are parsed through these, so a tool's structured result carries exactly the
 * fields its output schema declares, and a drift of the API shows up as an error, not as silently
 * missing data. They double as the tools' output schemas.
 */
import { z } from 'zod';

const timestamp = z.string().describe('ISO 8601 UTC timestamp');

export const inboxSchema = z.object({
  id: z.string().describe('Inbox id (a UUID): the `inbox_id` of the other tools'),
  name: z.string(),
  email_address: z.string().describe('The address mail to this inbox is sent to'),
  organization_id: z.string().describe('The organization the inbox belongs to (`default` unless one was named)'),
  created_at: timestamp,
});
export type Inbox = z.output<typeof inboxSchema>;

const storedAttachmentSchema = z.object({
  id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().describe('Bytes'),
});

export const sendResultSchema = z.object({
  id: z.string().describe('Id of the sent message'),
  thread_id: z.string().describe('Thread the message is in: pass it to wait_for_reply, or as `thread_id` to reply again'),
  inbox_id: z.string(),
  direction: z.literal('OUTBOUND'),
  to: z.array(z.string()),
  subject: z.string(),
  content_clean: z.string().describe('The body as clean Markdown'),
  attachments: z.array(storedAttachmentSchema).optional().describe('Present when attachments were sent'),
  created_at: timestamp,
});
export type SendResult = z.output<typeof sendResultSchema>;

export const messageSchema = z.object({
  id: z.string(),
  thread_id: z.string(),
  inbox_id: z.string(),
  direction: z.enum(['inbound', 'outbound']).describe('`inbound`: received by the inbox; `outbound`: sent from it'),
  provider_message_id: z.string().describe('The Message-ID header, in angle brackets'),
  subject: z.string(),
  from_address: z.string(),
  to_addresses: z.array(z.string()),
  cc_addresses: z.array(z.string()).nullable(),
  bcc_addresses: z.array(z.string()).nullable(),
  reply_to_addresses: z.array(z.string()).nullable(),
  text: z.string().describe('Plain-text body'),
  html: z.string().describe('HTML body'),
  content_clean: z.string().describe('The content as clean Markdown, quoted history and boilerplate removed'),
  timestamp,
  labels: z.array(z.string()),
  preview: z.string(),
  size: z.number().int(),
  in_reply_to: z.string().nullable(),
  references: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: timestamp,
});
export type Message = z.output<typeof messageSchema>;

export const searchItemSchema = messageSchema.pick({
  id: true,
  thread_id: true,
  inbox_id: true,
  subject: true,
  from_address: true,
  text: true,
  content_clean: true,
  created_at: true,
});

/** A page of a list endpoint: `total` counts every match, `count` those on this page. */
function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    count: z.number().int().describe('Items on this page'),
    total: z.number().int().describe('Items matching overall, for paging with offset'),
  });
}

export const messagePageSchema = pageOf(messageSchema);

/** A page of GET /v1/events restricted to `message.received`: `data` is the message as the list shows it. */
export const receivedEventPageSchema = z.object({
  items: z.array(z.object({ id: z.number().int(), type: z.literal('message.received'), data: messageSchema })),
  next_after: z.number().int(),
});
export const searchPageSchema = pageOf(searchItemSchema);

/** GET /v1/events: every type of event, in commit order, with the cursor for the next call. */
export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.bounced',
  'message.complained',
  'message.failed',
  'message.blocked',
  'thread.summarized',
] as const;
export const eventPageSchema = z.object({
  items: z.array(
    z.object({
      id: z.number().int().describe('Ordered by commit: an event committed later has a larger id'),
      type: z.enum(EVENT_TYPES),
      created_at: timestamp,
      organization_id: z.string(),
      inbox_id: z.string(),
      thread_id: z.string().nullable(),
      message_id: z.string().nullable(),
      data: z
        .record(z.string(), z.unknown())
        .describe("The message's list view (message events) or the thread's (thread events)"),
    }),
  ),
  next_after: z.number().int().describe("The cursor for the next call: the last item's id, or `after` when there is none"),
});

export const threadSummarySchema = z.object({
  id: z.string(),
  subject: z.string(),
  last_message_at: timestamp,
  message_count: z.number().int(),
  participants: z.array(z.string()),
  summary: z.string().nullable(),
});
export type ThreadSummary = z.output<typeof threadSummarySchema>;
export const threadPageSchema = pageOf(threadSummarySchema);

export const threadSchema = z.object({
  id: z.string(),
  inbox_id: z.string(),
  subject: z.string(),
  last_message_at: timestamp,
  summary: z.string().nullable(),
  messages: z.array(
    z.object({
      id: z.string(),
      role: z.enum(['user', 'assistant']),
      author: z.string(),
      content: z.string(),
      timestamp,
    }),
  ),
});
export type Thread = z.output<typeof threadSchema>;

export const inboxPageSchema = pageOf(inboxSchema);

export const attachmentListItemSchema = z.object({
  id: z.string().describe('Attachment id: the `attachment_id` of get_attachment_content'),
  message_id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().describe('Bytes'),
  created_at: timestamp,
});
export const attachmentPageSchema = pageOf(attachmentListItemSchema);

export const attachmentSchema = attachmentListItemSchema.extend({
  disposition: z.string(),
  storage_backend: z.string(),
  content_hash: z.string(),
  download_url: z.string(),
});
export type Attachment = z.output<typeof attachmentSchema>;

/** `{ "error": { "code", "message", "details" } }`, inbox-api's one error envelope. */
export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
