import { z } from 'zod';
import { messageFilters } from '../messages/schemas.js';
import { id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';

export const threadParams = z.object({ thread_id: id });

const threadEntrySchema = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']).meta({ description: '`user` for inbound messages, `assistant` for outbound' }),
  author: z.string(),
  content: z.string().meta({ description: 'Clean Markdown' }),
  timestamp,
});

export const threadSchema = z
  .object({
    id: z.string(),
    inbox_id: z.string(),
    subject: z.string(),
    last_message_at: timestamp,
    summary: z.string().nullable(),
    messages: z.array(threadEntrySchema).meta({ description: 'Oldest first' }),
  })
  .meta({ id: 'Thread' });

export type ThreadResponse = z.input<typeof threadSchema>;

const threadSummarySchema = z
  .object({
    id: z.string(),
    subject: z.string(),
    last_message_at: timestamp,
    message_count: z.number().int(),
    participants: z.array(z.string()),
    labels: z.array(z.string()).meta({ description: "Every label of the thread's messages, once each, sorted" }),
    summary: z.string().nullable(),
  })
  .meta({ id: 'ThreadSummary' });

export type ThreadSummary = z.input<typeof threadSummarySchema>;

export const listThreadsQuery = z
  .object({
    inbox_id: id,
    labels: messageFilters.labels.meta({
      description: "Only threads whose messages carry every one of these labels between them (the union of the thread's labels)",
    }),
    direction: messageFilters.direction.meta({ description: 'Only threads with a message of this direction' }),
    from: messageFilters.from.meta({ description: 'Only threads with a message from this sender (or part of the address)' }),
    after: messageFilters.after.meta({ description: 'Only threads whose last message is after this time (exclusive)' }),
    before: messageFilters.before.meta({ description: 'Only threads whose last message is before this time (exclusive)' }),
    has_attachments: messageFilters.has_attachments.meta({
      description: 'Only threads with (`true`) or without (`false`) any attachment',
    }),
    ...pageQuery,
  })
  .strict();

export type ListThreadsQuery = z.output<typeof listThreadsQuery>;

export const threadPage = pageOf(threadSummarySchema).meta({ id: 'ThreadPage', description: 'Threads, newest activity first' });
