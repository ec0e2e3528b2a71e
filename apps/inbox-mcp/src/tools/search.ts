import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { searchPageSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, untrustedResult } from './results.js';

// inbox-api pages hold at most 200 items.
const MAX_LIMIT = 200;

// `query` as search_email names it, or `q` as the REST API does: one of the two.
const searchInput = z
  .strictObject({
    query: z
      .string()
      .optional()
      .describe(
        'Words to find (web-search syntax: `"a phrase"`, `-word`, `or`), also matched as a case-insensitive substring ' +
          'for parts of words and addresses; 1 to 200 characters. Required (or give it as `q`)',
      ),
    q: z.string().optional().describe('The same as `query`, by the REST API’s name: give one of the two'),
    inbox_ids: z
      .array(z.string())
      .min(1)
      .max(100)
      .optional()
      .describe('Only these inboxes (their `id`s); default: every inbox your key reaches'),
    labels: z.array(z.string()).optional().describe('Only messages with every one of these labels'),
    after: z.string().optional().describe('Only messages created after this time (ISO 8601, exclusive)'),
    before: z.string().optional().describe('Only messages created before this time (ISO 8601, exclusive)'),
    limit: z.number().int().min(1).max(MAX_LIMIT).default(10).describe(`Matches per page, 1 to ${MAX_LIMIT}`),
    page_token: z.string().optional().describe("The last page's `next_page_token`, for the page after it"),
  })
  .refine((args) => (args.query === undefined) !== (args.q === undefined), {
    message: 'Give the words to find as `query` (or as `q`), once',
  });

const readAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function registerSearchTool(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'search',
    {
      title: 'Search all inboxes',
      description:
        'Full-text search across every inbox your key reaches (or `inbox_ids`), most relevant first: subject words weigh ' +
        'more; the text body, sender and attachment filenames count too. Filter by `labels` and by time (`after`, ' +
        '`before`). Each match has id, thread_id, inbox_id, direction, subject, from_address, labels, created_at, a ' +
        '`score` and a `snippet` of the body with `<mark>` around the matches. Page with `page_token` (the last ' +
        "answer's `next_page_token`). To search one inbox or thread by substring, use search_email.",
      inputSchema: searchInput,
      outputSchema: searchPageSchema,
      annotations: readAnnotations,
    },
    ({ query, q, ...filters }, ctx) =>
      runTool({ logger: deps.logger, tool: 'search', signal: ctx.mcpReq.signal }, async () =>
        untrustedResult(await deps.api.search({ ...filters, q: (query ?? q)! }, ctx.mcpReq), [
          'items[].subject',
          'items[].from_address',
          'items[].snippet',
        ]),
      ),
  );
}
