import { setTimeout as sleep } from 'node:timers/promises';
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { InboxApiError, InboxApiUnreachableError } from '../api-client.js';
import { messageSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, structuredResult, untrustedResult } from './results.js';

export const DEFAULT_TIMEOUT_SECONDS = 300;
// A request held open longer than this outlives the idle timeouts of most proxies and clients.
export const MAX_TIMEOUT_SECONDS = 900;

const FIRST_PROGRESS_DELAY_MS = 1000;
const PROGRESS_DELAY_FACTOR = 1.5;
const MAX_PROGRESS_DELAY_MS = 10_000;
/**
 * Longest single wait asked of GET /v1/events (the API allows 60 s): well under the API client's
 * 60 s time limit, and repeated until the tool's own timeout.
 */
const LONG_POLL_SECONDS = 50;
/** Events read per page while finding where the thread's log stands. */
const HEAD_PAGE = 500;
/** Pause before waiting again after a transient failure (the API away for a moment). */
const RETRY_DELAY_MS = 1000;

/** Progress notifications while waiting: after 1 s, 1.5 s, 2.25 s, ... up to every 10 s. */
export function nextProgressDelayMs(previousMs: number | undefined): number {
  return previousMs === undefined ? FIRST_PROGRESS_DELAY_MS : Math.min(previousMs * PROGRESS_DELAY_FACTOR, MAX_PROGRESS_DELAY_MS);
}

/** Failures worth waiting through: the API away for a moment, busy, or rate limiting. */
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
        "call starts counts, and messages you send do not. Waits on the inbox service's event log (GET /v1/events?wait=), " +
        `which answers the moment a message is received in the thread. After \`timeout_seconds\` (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}) ` +
        'it returns `status: "timed_out"`, which is not an error: call it again to keep waiting. Reports progress while ' +
        'waiting when the request carries a progress token.',
      inputSchema: waitForReplyInput,
      outputSchema: waitResultSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'wait_for_reply', signal: ctx.mcpReq.signal }, async () => {
        const started = performance.now();
        const waitedSeconds = () => Math.round(performance.now() - started) / 1000;
        const deadline = started + args.timeout_seconds * 1000;
        const progressToken = ctx.mcpReq._meta?.progressToken;
        const reportProgress = async () => {
          if (progressToken === undefined) return;
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress: (performance.now() - started) / 1000,
              total: args.timeout_seconds,
              message: `Waiting for a reply in thread ${args.thread_id}`,
            },
          });
        };
        const received = (after: number, wait?: number) =>
          deps.api.receivedEvents({ thread_id: args.thread_id, after, limit: HEAD_PAGE, wait }, ctx.mcpReq);

        // Where the thread's log stands when the call starts: what is there is not the reply. An
        // unknown thread fails here, at once.
        let after = 0;
        for (;;) {
          const page = await received(after);
          after = page.next_after;
          if (page.items.length < HEAD_PAGE) break;
        }
        await reportProgress();
        let progressDelay = nextProgressDelayMs(undefined);
        const progress = { timer: undefined as NodeJS.Timeout | undefined };
        const scheduleProgress = () => {
          progress.timer = setTimeout(() => {
            progressDelay = nextProgressDelayMs(progressDelay);
            scheduleProgress();
            reportProgress().catch((error: unknown) => deps.logger.warn({ err: error }, 'wait_for_reply: progress not sent'));
          }, progressDelay);
        };
        scheduleProgress();
        try {
          // Each wait is held by the API until a message is received in the thread: it reads nothing while idle.
          for (;;) {
            const remaining = deadline - performance.now();
            if (remaining <= 0) {
              return structuredResult({ status: 'timed_out', thread_id: args.thread_id, waited_seconds: waitedSeconds() });
            }
            try {
              const page = await received(after, Math.min(LONG_POLL_SECONDS, Math.ceil(remaining / 1000)));
              const [reply] = page.items;
              if (reply) {
                return untrustedResult(
                  { status: 'replied', thread_id: args.thread_id, waited_seconds: waitedSeconds(), message: reply.data },
                  ['message.subject', 'message.from_address', 'message.text', 'message.html', 'message.content_clean'],
                );
              }
              after = page.next_after;
            } catch (error) {
              if (!isTransient(error) || ctx.mcpReq.signal.aborted) throw error;
              deps.logger.warn({ err: error, threadId: args.thread_id }, 'wait_for_reply: wait failed, waiting on');
              await sleep(Math.min(RETRY_DELAY_MS, Math.max(0, deadline - performance.now())), undefined, {
                signal: ctx.mcpReq.signal,
              });
            }
          }
        } finally {
          clearTimeout(progress.timer);
        }
      }),
  );
}
