import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { eventPageSchema, inboxPageSchema, threadPageSchema, threadSchema } from '../api-schemas.js';
import { EVENT_TYPES } from '../api-views.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, structuredResult, untrustedResult } from './results.js';

// inbox-api pages hold at most 200 items (500 for events).
const MAX_LIMIT = 200;
const MAX_EVENTS = 500;

const page = {
  limit: z.number().int().min(1).max(MAX_LIMIT).default(50).describe(`Items per page, 1 to ${MAX_LIMIT}`),
  offset: z.number().int().min(0).default(0).describe('Items to skip, for the next page'),
  page_token: z
    .string()
    .optional()
    .describe("The last page's `next_page_token`, for the page after it (steady while items are added; leave `offset` at 0)"),
};

const listInboxesInput = z.strictObject(page);
const listThreadsInput = z.strictObject({
  inbox_id: z.string().describe('Inbox whose threads to list (an inbox `id`)'),
  ...page,
});
const getThreadInput = z.strictObject({ thread_id: z.string().describe('The thread (a `thread_id` from an earlier result)') });
const listEventsInput = z.strictObject({
  after: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Events after this id: the `next_after` of the previous call; omit to start from the oldest kept'),
  types: z.array(z.enum(EVENT_TYPES)).min(1).optional().describe('Only these event types (default: all)'),
  inbox_id: z.string().optional().describe('Only events of this inbox'),
  thread_id: z.string().optional().describe('Only events of this thread'),
  limit: z.number().int().min(1).max(MAX_EVENTS).default(100).describe(`Events per call, 1 to ${MAX_EVENTS}`),
});

// Reads of inbox-api's own data: nothing changes, and repeating a call is harmless.
const readAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function registerBrowseTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'list_inboxes',
    {
      title: 'List inboxes',
      description:
        'List the inboxes your key can use, newest first: each with its `id` (the `inbox_id` of the other tools), ' +
        "`email_address`, name, organization and creation time. Page with `limit` and `page_token` (the last answer's " +
        '`next_page_token`) or `offset`; `total` counts them all.',
      inputSchema: listInboxesInput,
      outputSchema: inboxPageSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'list_inboxes', signal: ctx.mcpReq.signal }, async () =>
        structuredResult(await deps.api.listInboxes(args, ctx.mcpReq)),
      ),
  );

  server.registerTool(
    'list_threads',
    {
      title: 'List threads',
      description:
        'List the conversations (threads) of an inbox, most recently active first: each with its `id` (a `thread_id`), ' +
        'subject, time of the last message, message count, participants and summary. Read one with get_thread. ' +
        "Page with `limit` and `page_token` (the last answer's `next_page_token`) or `offset`; `total` counts them all.",
      inputSchema: listThreadsInput,
      outputSchema: threadPageSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'list_threads', signal: ctx.mcpReq.signal }, async () =>
        untrustedResult(await deps.api.listThreads(args, ctx.mcpReq), [
          'items[].subject',
          'items[].participants',
          'items[].summary',
        ]),
      ),
  );

  server.registerTool(
    'get_thread',
    {
      title: 'Get thread',
      description:
        'Read a whole conversation: its subject, summary and every message oldest first, each with `role` (`user`: ' +
        'received, `assistant`: sent from the inbox), author, content (clean Markdown) and timestamp. The same as the ' +
        'resource email://thread/{thread_id}, as structured data.',
      inputSchema: getThreadInput,
      outputSchema: threadSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'get_thread', signal: ctx.mcpReq.signal }, async () =>
        untrustedResult(await deps.api.getThread(args.thread_id, ctx.mcpReq), [
          'subject',
          'summary',
          'messages[].author',
          'messages[].content',
        ]),
      ),
  );

  server.registerTool(
    'list_events',
    {
      title: 'List events',
      description:
        'Read the event log of your inboxes in commit order: mail received, sent, delivered, bounced, complained about, ' +
        'failed or blocked, and thread summaries. Pass the `next_after` of one call as `after` of the next to get only ' +
        'what happened since; filter by `types`, `inbox_id` or `thread_id`. Returns at once (to wait for a reply, use ' +
        'wait_for_reply). Fails with code `gone` when `after` is older than the log keeps: start again without it.',
      inputSchema: listEventsInput,
      outputSchema: eventPageSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'list_events', signal: ctx.mcpReq.signal }, async () => {
        const { types, ...query } = args;
        const events = await deps.api.listEvents({ ...query, types: types?.join(',') }, ctx.mcpReq);
        return untrustedResult(events, ['items[].data']);
      }),
  );
}
