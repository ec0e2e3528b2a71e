import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import type { ThreadSummary } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { UNTRUSTED_META_KEY } from '../tools/results.js';
import { readOrFail } from './read-errors.js';

export const RECENT_THREADS_TEMPLATE = 'email://inbox/{inbox_id}/recent';
export const RECENT_THREAD_COUNT = 10;
// Inboxes offered by resources/list: the newest, as many as one page of the API holds.
const LISTED_INBOXES = 100;

/** The recent-threads document: the newest threads' summaries, each with exactly the spec's fields. */
export function recentThreadsJson(threads: ThreadSummary[]): string {
  const summaries = threads.slice(0, RECENT_THREAD_COUNT).map((thread) => ({
    id: thread.id,
    subject: thread.subject,
    last_message_at: thread.last_message_at,
    message_count: thread.message_count,
    participants: thread.participants,
    summary: thread.summary,
  }));
  return JSON.stringify(summaries, null, 2);
}

export function recentThreadsUri(inboxId: string): string {
  return `email://inbox/${inboxId}/recent`;
}

export function registerRecentThreadsResource(server: McpServer, deps: ServerDeps): void {
  const template = new ResourceTemplate(RECENT_THREADS_TEMPLATE, {
    list: async (ctx) => {
      const inboxes = await readOrFail(RECENT_THREADS_TEMPLATE, () =>
        deps.api.listInboxes({ limit: LISTED_INBOXES }, ctx.mcpReq),
      );
      return {
        resources: inboxes.items.map((inbox) => ({
          uri: recentThreadsUri(inbox.id),
          name: `Recent threads of ${inbox.email_address}`,
          mimeType: 'application/json',
        })),
      };
    },
  });
  server.registerResource(
    'recent-threads',
    template,
    {
      title: 'Recent threads of an inbox',
      description:
        `The ${RECENT_THREAD_COUNT} most recently active threads of an inbox, newest first, as a JSON array of ` +
        '{id, subject, last_message_at, message_count, participants, summary}. Read a thread with email://thread/{thread_id}.',
      mimeType: 'application/json',
    },
    (uri, variables, ctx) =>
      readOrFail(uri.href, async () => {
        const page = await deps.api.listThreads({ inbox_id: String(variables.inbox_id), limit: RECENT_THREAD_COUNT }, ctx.mcpReq);
        const _meta = { [UNTRUSTED_META_KEY]: { source: 'email', fields: ['[].subject', '[].participants', '[].summary'] } };
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: recentThreadsJson(page.items), _meta }] };
      }),
  );
}
