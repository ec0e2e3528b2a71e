import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '@repo/http';
import { z } from 'zod';
import { type InboxApiClient, InboxApiError, InboxApiUnreachableError } from '../api-client.js';
import { type Message, messageSchema } from '../api-schemas.js';
import type { receivedEventPageSchema } from '../api-views.js';
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
export function isTransient(error: unknown): boolean {
  return (
    error instanceof InboxApiUnreachableError || (error instanceof InboxApiError && (error.status === 429 || error.status >= 500))
  );
}

export const waitForReplyInput = z.strictObject({
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

export type ReceivedEvent = z.output<typeof receivedEventPageSchema>['items'][number];

/** What the tool answers when a message arrived: the message, marked as untrusted mail. */
export function repliedResult(threadId: string, waitedSeconds: number, message: Message): CallToolResult {
  return untrustedResult({ status: 'replied', thread_id: threadId, waited_seconds: waitedSeconds, message }, [
    'message.subject',
    'message.from_address',
    'message.text',
    'message.html',
    'message.content_clean',
  ]);
}

/** What the tool answers when none arrived in time: not an error. */
export function timedOutResult(threadId: string, waitedSeconds: number): CallToolResult {
  return structuredResult({ status: 'timed_out', thread_id: threadId, waited_seconds: waitedSeconds });
}

/**
 * Where a thread's log stands now: the cursor after which a `message.received` is new. What is
 * there already is not the reply. An unknown thread fails here, at once.
 */
export async function threadLogHead(api: InboxApiClient, threadId: string, options: { signal: AbortSignal }): Promise<number> {
  let after = 0;
  for (;;) {
    const page = await api.receivedEvents({ thread_id: threadId, after, limit: HEAD_PAGE }, options);
    after = page.next_after;
    if (page.items.length < HEAD_PAGE) return after;
  }
}

/**
 * The first `message.received` of the thread after `after`, waiting for it until `deadline` (ms
 * since the epoch); undefined when none came in time. Each wait is held by the API until a message
 * is received in the thread: nothing is read while idle. Transient failures are waited through.
 */
export async function nextReceived(
  api: InboxApiClient,
  wait: { threadId: string; after: number; deadline: number },
  options: { signal: AbortSignal; logger: Logger },
): Promise<ReceivedEvent | undefined> {
  let { after } = wait;
  for (;;) {
    const remaining = wait.deadline - Date.now();
    if (remaining <= 0) return undefined;
    // The API waits whole seconds: a wait of the seconds left, rounded up, is cut at the deadline itself.
    const atDeadline = AbortSignal.timeout(remaining);
    try {
      const page = await api.receivedEvents(
        { thread_id: wait.threadId, after, limit: 1, wait: Math.min(LONG_POLL_SECONDS, Math.ceil(remaining / 1000)) },
        { signal: AbortSignal.any([options.signal, atDeadline]) },
      );
      const [event] = page.items;
      if (event) return event;
      after = page.next_after;
    } catch (error) {
      if (atDeadline.aborted && !options.signal.aborted) return undefined;
      if (!isTransient(error) || options.signal.aborted) throw error;
      options.logger.warn({ err: error, threadId: wait.threadId }, 'wait_for_reply: wait failed, waiting on');
      await sleep(Math.min(RETRY_DELAY_MS, Math.max(0, wait.deadline - Date.now())), undefined, { signal: options.signal });
    }
  }
}

export function registerWaitForReplyTool(server: McpServer, deps: ServerDeps): void {
  const tool = server.registerTool(
    'wait_for_reply',
    {
      title: 'Wait for reply (experimental)',
      description:
        '(Experimental) Wait until a new message is received in a thread, and return it. Only mail that arrives after the ' +
        "call starts counts, and messages you send do not. Waits on the inbox service's event log (GET /v1/events?wait=), " +
        `which answers the moment a message is received in the thread. After \`timeout_seconds\` (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}) ` +
        'it returns `status: "timed_out"`, which is not an error: call it again to keep waiting. Reports progress while ' +
        'waiting when the request carries a progress token. Clients that support tasks get a task at once, ' +
        'which survives their own request time limit and restarts of this server.',
      inputSchema: waitForReplyInput,
      outputSchema: waitResultSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'wait_for_reply', signal: ctx.mcpReq.signal }, async () => {
        const started = Date.now();
        const waitedSeconds = (until = Date.now()) => (until - started) / 1000;
        const progressToken = ctx.mcpReq._meta?.progressToken;
        const reportProgress = async () => {
          if (progressToken === undefined) return;
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress: waitedSeconds(),
              total: args.timeout_seconds,
              message: `Waiting for a reply in thread ${args.thread_id}`,
            },
          });
        };
        const after = await threadLogHead(deps.api, args.thread_id, ctx.mcpReq);
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
          const reply = await nextReceived(
            deps.api,
            { threadId: args.thread_id, after, deadline: started + args.timeout_seconds * 1000 },
            { signal: ctx.mcpReq.signal, logger: deps.logger },
          );
          return reply
            ? repliedResult(args.thread_id, waitedSeconds(), reply.data)
            : timedOutResult(args.thread_id, waitedSeconds());
        } finally {
          clearTimeout(progress.timer);
        }
      }),
  );
  // A task where the client asks for one (src/tasks): 2025-11-25 clients read this; 2026-07-28 drops it.
  tool.execution = { taskSupport: 'optional' };
}
