import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import type { Thread } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { UNTRUSTED_META_KEY } from '../tools/results.js';
import { readOrFail } from './read-errors.js';

export const THREAD_TEMPLATE = 'email://thread/{thread_id}';

/** `YYYY-MM-DD HH:MM` in UTC. */
export function formatDate(timestamp: string): string {
  return new Date(timestamp).toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * A thread as Markdown, laid out as the spec says: the subject as a level-2 heading, a Summary
 * section, then one block per message (From line with ← for received mail and → for sent mail,
 * Date line, content), blocks separated by horizontal rules.
 */
export function threadMarkdown(thread: Thread): string {
  const header = [`## ${thread.subject}`, '### Summary', thread.summary ?? '_No summary yet._'].join('\n\n');
  const messages = thread.messages.map((message) =>
    [
      `From: ${message.author} ${message.role === 'user' ? '←' : '→'}\nDate: ${formatDate(message.timestamp)}`,
      message.content,
    ].join('\n\n'),
  );
  return `${[header, ...messages].join('\n\n---\n\n')}\n`;
}

export function registerThreadResource(server: McpServer, deps: ServerDeps): void {
  server.registerResource(
    'thread',
    // Threads are too many to list; clients reach them by the ids other results carry.
    new ResourceTemplate(THREAD_TEMPLATE, { list: undefined }),
    {
      title: 'E-mail thread',
      description:
        'A whole conversation as Markdown: subject, summary, then every message oldest first with its sender ' +
        '(← received, → sent), date (UTC) and content.',
      mimeType: 'text/markdown',
    },
    (uri, variables, ctx) =>
      readOrFail(uri.href, async () => {
        const thread = await deps.api.getThread(String(variables.thread_id), ctx.mcpReq);
        // The messages are the senders' words: marked untrusted, as tool results carrying mail are.
        const _meta = { [UNTRUSTED_META_KEY]: { source: 'email', fields: ['text'] } };
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: threadMarkdown(thread), _meta }] };
      }),
  );
}
