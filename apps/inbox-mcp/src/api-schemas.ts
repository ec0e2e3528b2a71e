/**
 * inbox-api's response shapes as inbox-mcp parses them, GENERATED from inbox-api's OpenAPI document
 * by `pnpm --filter inbox-mcp gen:api-schemas` (scripts/api-schemas-codegen.ts): do not edit.
 * test/api-schemas.test.ts fails when this file no longer matches the API.
 */
import { z } from 'zod';

export const errorSchema = z.object({
  error: z.object({
    code: z.enum([
      'bad_request',
      'validation_error',
      'unauthorized',
      'forbidden',
      'sending_disabled',
      'recipient_blocked',
      'not_found',
      'method_not_allowed',
      'conflict',
      'gone',
      'payload_too_large',
      'request_header_too_large',
      'unsupported_media_type',
      'rate_limited',
      'internal_error',
      'provider_error',
      'upstream_error',
      'service_unavailable',
    ]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
});
export type ErrorEnvelope = z.output<typeof errorSchema>;

export const inboxSchema = z.object({
  id: z.string(),
  name: z.string(),
  email_address: z.string(),
  organization_id: z.string(),
  sending_enabled: z.boolean().describe('The inbox’s kill switch (PATCH /v1/inboxes/{inbox_id})'),
  send_policy: z
    .enum(['direct', 'approval'])
    .describe(
      '`direct`: sends go at once; `approval`: every send (POST /v1/messages, reply, forward, draft send) becomes a draft pending approval (202), sent once a key with `approve` approves it',
    ),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type Inbox = z.output<typeof inboxSchema>;

export const inboxPageSchema = z.object({
  items: z.array(inboxSchema),
  count: z.number().int(),
  total: z.number().int(),
  next_page_token: z.string().nullable().describe('Pass as `page_token` for the page after this one; null on the last page'),
});
export type InboxPage = z.output<typeof inboxPageSchema>;

export const threadSummarySchema = z.object({
  id: z.string(),
  subject: z.string(),
  last_message_at: z.string().describe('ISO 8601 UTC timestamp'),
  message_count: z.number().int(),
  participants: z.array(z.string()),
  labels: z.array(z.string()).describe("Every label of the thread's messages, once each, sorted"),
  summary: z.string().nullable(),
});
export type ThreadSummary = z.output<typeof threadSummarySchema>;

export const threadPageSchema = z
  .object({
    items: z.array(threadSummarySchema),
    count: z.number().int(),
    total: z.number().int(),
    next_page_token: z.string().nullable().describe('Pass as `page_token` for the page after this one; null on the last page'),
  })
  .describe('Threads, newest activity first');
export type ThreadPage = z.output<typeof threadPageSchema>;

export const threadSchema = z.object({
  id: z.string(),
  inbox_id: z.string(),
  subject: z.string(),
  last_message_at: z.string().describe('ISO 8601 UTC timestamp'),
  summary: z.string().nullable(),
  messages: z
    .array(
      z.object({
        id: z.string(),
        role: z.enum(['user', 'assistant']).describe('`user` for inbound messages, `assistant` for outbound'),
        author: z.string(),
        content: z.string().describe('Clean Markdown'),
        timestamp: z.string().describe('ISO 8601 UTC timestamp'),
      }),
    )
    .describe('Oldest first'),
});
export type Thread = z.output<typeof threadSchema>;

export const sendMessageResultSchema = z.object({
  id: z.string(),
  thread_id: z.string(),
  inbox_id: z.string(),
  direction: z.enum(['OUTBOUND']),
  to: z.array(z.string()),
  subject: z.string(),
  content_clean: z.string(),
  attachments: z
    .array(z.object({ id: z.string(), filename: z.string(), content_type: z.string(), size: z.number().int() }))
    .describe('Present when attachments were sent')
    .optional(),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type SendMessageResult = z.output<typeof sendMessageResultSchema>;

export const draftSchema = z.object({
  id: z.string(),
  inbox_id: z.string(),
  status: z.enum(['draft', 'pending_approval', 'scheduled', 'sent', 'rejected', 'cancelled']),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  subject: z.string(),
  body: z.string(),
  attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number().int() })),
  reply_to_thread_id: z.string().nullable(),
  send_at: z.string().nullable().describe('ISO 8601 UTC timestamp'),
  created_by: z.string().nullable().describe('The API key that wrote it; null: an operator'),
  approved_at: z.string().nullable().describe('ISO 8601 UTC timestamp'),
  approved_by: z.string().nullable().describe('The approving API key’s id, or `operator`'),
  rejected_at: z.string().nullable().describe('ISO 8601 UTC timestamp'),
  rejection_reason: z.string().nullable(),
  message_id: z.string().nullable().describe('The message it was sent as'),
  sent_at: z.string().nullable().describe('ISO 8601 UTC timestamp'),
  last_error: z
    .string()
    .nullable()
    .describe('Why the last attempt to send it did not (a kill switch, a cap, the provider): it is tried again'),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
  updated_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type Draft = z.output<typeof draftSchema>;

export const heldSendSchema = z.object({ draft: draftSchema });
export type HeldSend = z.output<typeof heldSendSchema>;

export const deliveryDetailSchema = z
  .object({
    provider: z.string().describe('The transport: local, smtp, mailgun, sendgrid or ses'),
    event: z
      .string()
      .describe(
        "The provider's name of the event last applied (SES `Bounce`, Mailgun `failed`, SendGrid `spamreport`), or `send`",
      ),
    recipient: z.string().nullable().describe('The recipient the event is about'),
    reason: z.string().nullable().describe("The provider's reason or diagnostic (bounce type, SMTP reply)"),
    timestamp: z.string().describe('When the provider says it happened'),
  })
  .nullable();
export type DeliveryDetail = z.output<typeof deliveryDetailSchema>;

export const messageSchema = z.object({
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
  timestamp: z.string().describe('ISO 8601 UTC timestamp'),
  labels: z.array(z.string()),
  preview: z.string(),
  size: z.number().int(),
  in_reply_to: z.string().nullable(),
  references: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  delivery_status: z
    .enum(['sent', 'delivered', 'bounced', 'complained', 'failed'])
    .nullable()
    .describe(
      'Outbound mail: `sent` once the provider took it, then what its delivery events report (`delivered`, `bounced`, `complained`; `failed` when the transport refused it or the provider dropped it). Only ever moves to a worse status (sent < delivered < bounced = failed < complained). Null for inbound mail and while sending.',
    ),
  delivery_detail: deliveryDetailSchema,
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type Message = z.output<typeof messageSchema>;

export const messageSearchItemSchema = z.object({
  id: z.string(),
  thread_id: z.string(),
  inbox_id: z.string(),
  subject: z.string(),
  from_address: z.string(),
  text: z.string(),
  content_clean: z.string(),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type MessageSearchItem = z.output<typeof messageSearchItemSchema>;

export const messagePageSchema = z
  .object({
    items: z.array(z.union([messageSchema, messageSearchItemSchema])),
    count: z.number().int(),
    total: z.number().int(),
    next_page_token: z.string().nullable().describe('Pass as `page_token` for the page after this one; null on the last page'),
  })
  .describe('Messages newest first; with `q`, items carry the search subset of fields');
export type MessagePage = z.output<typeof messagePageSchema>;

export const attachmentListItemSchema = z.object({
  id: z.string(),
  message_id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
});
export type AttachmentListItem = z.output<typeof attachmentListItemSchema>;

export const attachmentPageSchema = z
  .object({
    items: z.array(attachmentListItemSchema),
    count: z.number().int(),
    total: z.number().int(),
    next_page_token: z.string().nullable().describe('Pass as `page_token` for the page after this one; null on the last page'),
  })
  .describe('Attachments newest first');
export type AttachmentPage = z.output<typeof attachmentPageSchema>;

export const attachmentSchema = z.object({
  id: z.string(),
  message_id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
  disposition: z.string().describe('As the attachment came in its message: `attachment` or `inline`'),
  storage_backend: z
    .string()
    .describe(
      'The storage backend that holds the content: `local`, `database` or `gcs` (STORAGE_BACKEND). An attachment kept in its own database record (`kept_in_record`) names the service’s backend',
    ),
  kept_in_record: z
    .boolean()
    .describe(
      'True when the content is kept in the attachment’s own database record (in a mail of more than 16 attachments, those of at most INBOX_INLINE_ATTACHMENT_BYTES: written with the message, no object), served by this service’s content route whatever the backend',
    ),
  content_hash: z.string().describe('`sha256:<hex>` of the content'),
  download_url: z
    .string()
    .describe(
      'Where the content can be fetched without an API key until the link expires: this service’s content route with `token` and `expires` (local and database storage, and any attachment kept in its record), or a signed Cloud Storage URL (gcs)',
    ),
});
export type Attachment = z.output<typeof attachmentSchema>;

export const eventSchema = z.object({
  id: z.number().int().describe('Ordered by commit: an event committed later has a larger id'),
  type: z.enum([
    'message.received',
    'message.sent',
    'message.delivered',
    'message.bounced',
    'message.complained',
    'message.failed',
    'message.blocked',
    'thread.summarized',
    'draft.created',
    'draft.pending_approval',
    'draft.approved',
    'draft.rejected',
    'draft.scheduled',
    'draft.sent',
    'draft.cancelled',
  ]),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
  organization_id: z.string(),
  inbox_id: z.string(),
  thread_id: z.string().nullable(),
  message_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).describe("The message's list view (message events) or the thread's (thread events)"),
});
export type Event = z.output<typeof eventSchema>;

export const eventPageSchema = z.object({
  items: z.array(eventSchema),
  next_after: z.number().int().describe("The cursor for the next call: the last item's id, or `after` when there is none"),
});
export type EventPage = z.output<typeof eventPageSchema>;

export const searchResultSchema = z.object({
  id: z.string(),
  thread_id: z.string(),
  inbox_id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  subject: z.string(),
  from_address: z.string(),
  labels: z.array(z.string()),
  created_at: z.string().describe('ISO 8601 UTC timestamp'),
  score: z.number().describe('Relevance: higher is better (full-text rank, plus a bonus for the exact text)'),
  snippet: z
    .string()
    .describe(
      'A passage of the text body around the matches (the subject, when only it matches), HTML-escaped (`&`, `<`, `>`, `"`, `\'` as entities); the only markup is `<mark>` … `</mark>` around each match. Safe to insert as HTML; for plain text, remove the two tags and unescape the entities.',
    ),
});
export type SearchResult = z.output<typeof searchResultSchema>;

export const searchPageSchema = z
  .object({
    items: z.array(searchResultSchema),
    count: z.number().int(),
    total: z
      .number()
      .int()
      .describe('How many matches the search ranks and lists: all of them, or the newest 200 when more match'),
    next_page_token: z.string().nullable().describe('Pass as `page_token` for the page after this one; null on the last page'),
    total_is_lower_bound: z
      .boolean()
      .describe(
        'True when more messages match than `total`: only the newest 200 matches are ranked and listed; narrow the search (`before`, `after`, `inbox_ids`, `labels`, more words) to reach older ones',
      ),
  })
  .describe('Matches, most relevant first (then newest), among the newest 200 matches');
export type SearchPage = z.output<typeof searchPageSchema>;
