import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { messageListSchema, searchPageSchema } from '../api-views.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, untrustedResult } from './results.js';

/** Where senders' text is in a page of messages. */
const MAIL_FIELDS = ['items[].subject', 'items[].from_address', 'items[].text', 'items[].content_clean'];

// inbox-api pages hold at most 200 items.
const MAX_LIMIT = 200;

const scope = {
  inbox_id: z.string().optional().describe('Inbox to look in (an inbox `id`); this or thread_id is required'),
  thread_id: z.string().optional().describe('Thread to look in (a `thread_id`); this or inbox_id is required'),
};

const page = (defaultLimit: number) => ({
  limit: z.number().int().min(1).max(MAX_LIMIT).default(defaultLimit).describe(`Messages per page, 1 to ${MAX_LIMIT}`),
  offset: z.number().int().min(0).default(0).describe('Messages to skip, for the next page'),
});

const inboxOrThread = (args: { inbox_id?: string; thread_id?: string }) =>
  args.inbox_id !== undefined || args.thread_id !== undefined;
const inboxOrThreadRequired = { error: 'inbox_id or thread_id is required', path: ['inbox_id'] };

const listMessagesInput = z.strictObject({ ...scope, ...page(50) }).refine(inboxOrThread, inboxOrThreadRequired);

const searchEmailInput = z
  .strictObject({
    query: z
      .string()
      .describe('Text to find, case-insensitively, anywhere in subject, body, sender address or attachment filenames'),
    ...scope,
    ...page(10),
  })
  .refine(inboxOrThread, inboxOrThreadRequired);

const readAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function registerMessageTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'list_messages',
    {
      title: 'List messages',
      description:
        'List the messages of an inbox (`inbox_id`) or of one thread (`thread_id`), newest first, with full metadata: ' +
        '`direction` (`inbound` = received, `outbound` = sent), from/to/cc addresses, subject, the body as text, HTML and ' +
        'clean Markdown (`content_clean`, quoted history removed: the best field to read), labels, threading headers. ' +
        'Page with `limit` and `offset`; `total` is the number of messages overall. To find particular mail, use search_email.',
      inputSchema: listMessagesInput,
      outputSchema: messageListSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'list_messages', signal: ctx.mcpReq.signal }, async () =>
        untrustedResult(await deps.api.listMessages(args, ctx.mcpReq), [...MAIL_FIELDS, 'items[].html', 'items[].preview']),
      ),
  );

  server.registerTool(
    'search_email',
    {
      title: 'Search e-mail',
      description:
        'Search the messages of an inbox (`inbox_id`) or of one thread (`thread_id`) for `query`: a case-insensitive match ' +
        'anywhere in the subject, body text, sender address or attachment filenames. Newest first; each item has id, ' +
        'thread_id, inbox_id, subject, from_address, text, content_clean and created_at; `total` counts all matches. ' +
        'Use list_messages for full metadata, or the thread resource email://thread/{thread_id} to read a whole conversation.',
      inputSchema: searchEmailInput,
      outputSchema: searchPageSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'search_email', signal: ctx.mcpReq.signal }, async () => {
        const { query, ...filter } = args;
        return untrustedResult(await deps.api.searchMessages({ ...filter, q: query }, ctx.mcpReq), MAIL_FIELDS);
      }),
  );
}
