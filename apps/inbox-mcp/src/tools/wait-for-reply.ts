import { setTimeout as sleep } from 'node:timers/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { InboxApiError, InboxApiUnreachableError } from '../api-client.js';
import { type Message, messageSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, structuredResult } from './results.js';

export const DEFAULT_TIMEOUT_SECONDS = 300;
// A request held open longer than this outlives the idle timeouts of most proxies and clients.
export const MAX_TIMEOUT_SECONDS = 900;

const FIRST_POLL_DELAY_MS = 1000;
const POLL_DELAY_FACTOR = 1.5;
const MAX_POLL_DELAY_MS = 10_000;
// Newest messages compared at each poll: a reply lands among them even when several arrive at once.
const POLL_WINDOW = 50;

/** Backoff between polls: 1 s, 1.5 s, 2.25 s, ... up to 10 s. */
export function nextPollDelayMs(previousMs: number | undefined): number {
  return previousMs === undefined ? FIRST_POLL_DELAY_MS : Math.min(previousMs * POLL_DELAY_FACTOR, MAX_POLL_DELAY_MS);
}

/** The earliest received message of `newestFirst` that is not in `known`. */
export function firstNewInbound(newestFirst: Message[], known: ReadonlySet<string>): Message | undefined {
  return newestFirst.findLast((message) => message.direction === 'inbound' && !known.has(message.id));
}

/** Failures worth polling through: the API away for a moment, busy, or rate limiting. */
function isTransient(error: unknown): boolean {
  return (
    error instanceof InboxApiUnreachableError || (error instanceof InboxApiError && (error.status === 429 || error.status >= 500))
  );
}

const waitForReplyInput = z.strictObject({
  thread_id: z.string().describe('Thread to watch: the `thread_id` of the message you sent'),
  timeout_seconds: z
    .number()
    .min(1)
    .max(MAX_TIMEOUT_SECONDS)
    .default(DEFAULT_TIMEOUT_SECONDS)
    .describe(`How long to wait, in seconds (at most ${MAX_TIMEOUT_SECONDS})`),
});

const waitResultSchema = z.object({
  status: z.enum(['replied', 'timed_out']).describe('`replied`: `message` is the new message; `timed_out`: none arrived in time'),
  thread_id: z.string(),
  waited_seconds: z.number(),
  message: messageSchema.optional().describe('The received message, with status `replied`'),
});

export function registerWaitForReplyTool(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'wait_for_reply',
    {
      title: 'Wait for reply (experimental)',
      description:
        '(Experimental) Wait until a new message is received in a thread, and return it. Only mail that arrives after the ' +
        'call starts counts, and messages you send do not. Polls the inbox service with backoff (every 1 s at first, then ' +
        `up to every 10 s). After \`timeout_seconds\` (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}) ` +
        'it returns `status: "timed_out"`, which is not an error: call it again to keep waiting. Reports progress while ' +
        'waiting when the request carries a progress token.',
      inputSchema: waitForReplyInput,
      outputSchema: waitResultSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      runTool({ logger: deps.logger, tool: 'wait_for_reply', signal: extra.signal }, async () => {
        const started = performance.now();
        const waitedSeconds = () => Math.round(performance.now() - started) / 1000;
        const deadline = started + args.timeout_seconds * 1000;
        const progressToken = extra._meta?.progressToken;
        const reportProgress = async () => {
          if (progressToken === undefined) return;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress: (performance.now() - started) / 1000,
              total: args.timeout_seconds,
              message: `Waiting for a reply in thread ${args.thread_id}`,
            },
          });
        };
        const newestMessages = async () =>
          (await deps.api.listMessages({ thread_id: args.thread_id, limit: POLL_WINDOW, offset: 0 }, extra)).items;

        // What is there when the call starts is not the reply; an unknown thread fails here, at once.
        const known = new Set((await newestMessages()).map((message) => message.id));
        await reportProgress();
        let delay: number | undefined;
        for (;;) {
          const remaining = deadline - performance.now();
          if (remaining <= 0) {
            return structuredResult({ status: 'timed_out', thread_id: args.thread_id, waited_seconds: waitedSeconds() });
          }
          delay = nextPollDelayMs(delay);
          await sleep(Math.min(delay, remaining), undefined, { signal: extra.signal });
          try {
            const reply = firstNewInbound(await newestMessages(), known);
            if (reply) {
              return structuredResult({
                status: 'replied',
                thread_id: args.thread_id,
                waited_seconds: waitedSeconds(),
                message: reply,
              });
            }
          } catch (error) {
            if (!isTransient(error) || extra.signal.aborted) throw error;
            deps.logger.warn({ err: error, threadId: args.thread_id }, 'wait_for_reply: poll failed, polling on');
          }
          await reportProgress();
        }
      }),
  );
}
