import { z } from 'zod';
import { paginationQuery } from '@repo/http';
import { id, pageOf, pageTokenQuery, timestamp } from '../shared/schemas.js';

export const listAttachmentsQuery = z
  .object({
    message_id: id.optional(),
    thread_id: id.optional(),
    inbox_id: id.optional(),
    // Items are small: a longer page than messages' default, with the same bound.
    ...paginationQuery({ defaultLimit: 100, maxLimit: 200, offsetName: 'offset' }),
    ...pageTokenQuery,
  })
  .strict()
  .refine((query) => query.message_id !== undefined || query.thread_id !== undefined || query.inbox_id !== undefined, {
    error: 'message_id, thread_id or inbox_id is required',
    path: ['message_id'],
  });

export type ListAttachmentsQuery = z.output<typeof listAttachmentsQuery>;

export const attachmentParams = z.object({ attachment_id: id });

export const attachmentContentQuery = z
  .object({
    format: z
      .enum(['binary', 'base64'])
      .default('binary')
      .meta({ description: '`binary`: the bytes themselves; `base64`: JSON with the content base64-encoded' }),
    // Kept as given: a malformed value is a wrong signature (403), not invalid input.
    token: z.string().optional().meta({ description: 'Signature from `download_url`' }),
    expires: z.string().optional().meta({ description: 'Expiry from `download_url`, in seconds since the epoch' }),
  })
  .strict();

export type AttachmentContentQuery = z.output<typeof attachmentContentQuery>;

export const attachmentListItemSchema = z
  .object({
    id: z.string(),
    message_id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    created_at: timestamp,
  })
  .meta({ id: 'AttachmentListItem' });

export type AttachmentListItem = z.input<typeof attachmentListItemSchema>;

export const attachmentPage = pageOf(attachmentListItemSchema).meta({
  id: 'AttachmentPage',
  description: 'Attachments newest first',
});

export const attachmentSchema = attachmentListItemSchema
  .extend({
    disposition: z.string().meta({ description: 'As the attachment came in its message: `attachment` or `inline`' }),
    storage_backend: z.string().meta({
      description:
        'The storage backend that holds the content: `local`, `database` or `gcs` (STORAGE_BACKEND). An attachment kept in its own ' +
        'database record (`kept_in_record`) names the service’s backend',
    }),
    kept_in_record: z.boolean().meta({
      description:
        'True when the content is kept in the attachment’s own database record (in a mail of more than 16 attachments, those of at ' +
        'most INBOX_INLINE_ATTACHMENT_BYTES: written with the message, no object), served by this service’s content route whatever the backend',
    }),
    content_hash: z.string().meta({ description: '`sha256:<hex>` of the content' }),
    download_url: z.url().meta({
      description:
        'Where the content can be fetched without an API key until the link expires: this service’s content route ' +
        'with `token` and `expires` (local and database storage, and any attachment kept in its record), or a signed Cloud Storage URL (gcs)',
    }),
  })
  .meta({ id: 'Attachment' });

export type AttachmentResponse = z.input<typeof attachmentSchema>;

// What `format=base64` answers, for the documentation: download.ts writes it as the content is read, in this order.
export const attachmentContentSchema = z
  .object({
    content: z.string().meta({ description: 'The bytes, base64-encoded' }),
    content_type: z.string(),
    filename: z.string(),
  })
  .meta({ id: 'AttachmentContent' });
