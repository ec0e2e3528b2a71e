import { z } from 'zod';
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
    summary: z.string().nullable(),
  })
  .meta({ id: 'ThreadSummary' });

export type ThreadSummary = z.input<typeof threadSummarySchema>;

export const listThreadsQuery = z.object({ inbox_id: id, ...pageQuery }).strict();

export const threadPage = pageOf(threadSummarySchema).meta({ id: 'ThreadPage', description: 'Threads, newest activity first' });
