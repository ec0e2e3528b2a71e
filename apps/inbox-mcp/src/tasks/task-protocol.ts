/**
 * `wait_for_reply` as a task, on both protocol eras, for clients that ask for one:
 * - 2025-11-25 (experimental tasks): a `tools/call` with a `task` param answers `{task}` at once;
 *   `tasks/get` polls, `tasks/result` waits for the tool's result. The server declares
 *   `tasks.requests.tools.call` only: no `tasks/list`, no `tasks/cancel` (see below).
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a `tools/call` whose
 *   request declares the extension answers `resultType: "task"`; `tasks/get` polls and, once
 *   completed, carries the result; `tasks/cancel` is acknowledged.
 * SDK v2 parses the task vocabulary but runs none of it, so the handlers are registered here.
 * A task lives in its id (sealed, see task-id.ts) and in inbox-api's event log: nothing here
 * remembers it, so any replica answers and a restart loses nothing. For the same reason a
 * cancellation cannot be remembered: a wait holds nothing on the server between polls, so there
 * is nothing to stop, and a cancelled task would read as working on the next poll. 2025-11-25
 * requires the task to read `cancelled` afterwards, so the method is not offered there; the
 * extension makes cancellation cooperative (the server acknowledges, and need not stop), so it
 * is acknowledged there, and the task runs to its deadline.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Logger } from '@repo/http';
import { z } from 'zod';
import { type InboxApiClient, InboxApiError, InboxApiUnreachableError } from '../api-client.js';
import { errorResult } from '../tools/results.js';
import { waitForReplyInput } from '../tools/wait-for-reply.js';
import { openTaskId, sealTaskId, type WaitTask } from './task-id.js';
import { currentState, expiresAt, finalState, POLL_INTERVAL_MS, startWaitTask, type TaskState } from './wait-tasks.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const TASK_TOOL = 'wait_for_reply';

/** What each era is told the server can do with tasks (the 2026 codec drops `tasks`, the 2025 clients ignore `extensions`). */
export const TASK_CAPABILITIES = {
  tasks: { requests: { tools: { call: {} } } },
  extensions: { [TASKS_EXTENSION]: {} },
};

export interface TaskDeps {
  /** inbox-api as the caller. */
  api: InboxApiClient;
  logger: Logger;
  /** AES-256 key of the task ids (INBOX_MCP_TASK_KEY). */
  taskKey: Buffer;
}

type Era = '2025' | '2026';
type RawRequest = { params?: { name?: unknown; arguments?: unknown; task?: unknown } };
type RawHandler = (request: RawRequest, ctx: ServerContext) => Promise<unknown>;

/** 2026-07-28 requests carry their envelope (protocol version, client capabilities) in `_meta`; older ones do not. */
function eraOf(ctx: ServerContext): Era {
  return ctx.mcpReq.envelope === undefined ? '2025' : '2026';
}

/** Whether a 2026-07-28 envelope (`_meta`) declares the tasks extension among its client capabilities. */
function declaresTasks(envelope: Record<string, unknown> | undefined): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

const declaresTasksExtension = (ctx: ServerContext) => declaresTasks(ctx.mcpReq.envelope);

/** 2025-11-25's way of asking for a task: a `task` object among the call's params. */
const isTaskParam = (task: unknown) => typeof task === 'object' && task !== null;

/** A `tools/call`'s params as the body carries them, before the SDK reads them. */
export type RawCallParams = { name?: unknown; task?: unknown; _meta?: Record<string, unknown> };

/**
 * wantsTask's rule read off a body before the SDK has parsed it (to choose how the answer is sent):
 * a 2026-07-28 request (its envelope in `_meta`) declaring the extension, or an older one with `task`.
 */
export function asksForTask(params: RawCallParams): boolean {
  if (params._meta?.[CLIENT_CAPABILITIES_META_KEY] !== undefined) return declaresTasks(params._meta);
  return isTaskParam(params.task);
}

function wantsTask(request: RawRequest, ctx: ServerContext): boolean {
  if (request.params?.name !== TASK_TOOL) return false;
  return eraOf(ctx) === '2026' ? declaresTasksExtension(ctx) : isTaskParam(request.params.task);
}

/**
 * 2025-11-25: a task-augmented call of a tool without `execution.taskSupport` (all but
 * wait_for_reply) is -32601, as the tasks specification says servers should answer, rather than
 * a plain result its requestor, waiting for a CreateTaskResult, cannot read.
 */
function refuseTaskOfOtherTool(request: RawRequest, ctx: ServerContext): void {
  const { name, task } = request.params ?? {};
  if (eraOf(ctx) !== '2025' || name === TASK_TOOL || !isTaskParam(task)) return;
  throw new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `Tool ${String(name)} does not support tasks (only ${TASK_TOOL} does): call it without \`task\``,
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A task's status as each era names it. An error result ends the task `failed` on 2025-11-25 (its
 * tasks specification: a tool result with isError), `completed` on 2026-07-28 (the extension: the
 * request completed, its result an error).
 */
function statusOf(era: Era, state: TaskState): 'working' | 'completed' | 'failed' {
  if (state.status === 'completed' && era === '2025' && state.result.isError) return 'failed';
  return state.status;
}

/** The task as each era's wire spells it: 2025 `ttl`/`pollInterval`, 2026 `ttlMs`/`pollIntervalMs`. */
function taskView(era: Era, taskId: string, task: WaitTask, state: TaskState) {
  const common = {
    taskId,
    status: statusOf(era, state),
    createdAt: iso(task.created),
    lastUpdatedAt: iso(state.status === 'completed' ? state.at : task.created),
  };
  const ttl = expiresAt(task) - task.created;
  return era === '2025'
    ? { ...common, ttl, pollInterval: POLL_INTERVAL_MS }
    : { ...common, ttlMs: ttl, pollIntervalMs: POLL_INTERVAL_MS };
}

const taskIdParams = z.looseObject({ taskId: z.string() });

/**
 * Adds the task handlers to a server whose tools are registered: `tools/call` of
 * `wait_for_reply` with a task asked for answers a task; every other call goes to the SDK's
 * handler unchanged.
 */
export function registerWaitTasks(server: McpServer, deps: TaskDeps): void {
  const caller = deps.api.keyDigest;
  const unknownTask = () =>
    new ProtocolError(ProtocolErrorCode.InvalidParams, 'Unknown task: no task of this key has this id, or it has expired');
  /** The task an id stands for, for this caller; the same error for forged, altered, expired and other keys' ids. */
  const taskOf = (taskId: string): WaitTask => {
    const task = openTaskId(deps.taskKey, taskId);
    if (!task || task.caller !== caller || Date.now() > expiresAt(task)) throw unknownTask();
    return task;
  };
  /** The extension's methods are refused to 2026-07-28 requests that do not declare it (SEP-2575). */
  const gate = (ctx: ServerContext) => {
    if (eraOf(ctx) === '2026' && !declaresTasksExtension(ctx)) {
      throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
  };

  // The SDK's tools/call handler validates results as CallToolResult, which a CreateTaskResult is
  // not: the task path goes in front of it, in the request-handler table itself. SDK v2 has no
  // public way to read a registered handler (only the protected `_getRequestHandler`), and one set
  // through `setRequestHandler('tools/call', ...)` is wrapped in that same validation: hence the cast.
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RawHandler> })._requestHandlers;
  const sdkToolsCall = handlers.get('tools/call');
  if (!sdkToolsCall) throw new Error('registerWaitTasks: register the tools first');
  handlers.set('tools/call', async (request, ctx) => {
    refuseTaskOfOtherTool(request, ctx);
    if (!wantsTask(request, ctx)) return sdkToolsCall(request, ctx);
    // Arguments the schema refuses: the tool's own `Input validation error` result, as the plain call gives.
    const args = waitForReplyInput.safeParse(request.params?.arguments ?? {});
    if (!args.success) return sdkToolsCall(request, ctx);
    let task: WaitTask;
    try {
      task = await startWaitTask(
        deps.api,
        { threadId: args.data.thread_id, timeoutSeconds: args.data.timeout_seconds, caller },
        ctx.mcpReq,
      );
    } catch (error) {
      // The wait cannot start (an unknown thread, the API away): no task. On 2026-07-28 the tool's
      // error result, which a task request may get instead of a task; a 2025-11-25 requestor reads
      // only a CreateTaskResult, so it gets a JSON-RPC error saying why (invalid params: the thread).
      const failure =
        error instanceof InboxApiError
          ? errorResult(error.code, error.message, error.details)
          : error instanceof InboxApiUnreachableError
            ? errorResult('api_unreachable', error.message)
            : undefined;
      if (!failure) throw error;
      if (eraOf(ctx) === '2026') return failure;
      const code =
        error instanceof InboxApiError && error.status < 500 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError;
      throw new ProtocolError(code, `wait_for_reply cannot start: ${(error as Error).message}`, {
        ...(error instanceof InboxApiError && { error: { code: error.code, details: error.details } }),
      });
    }
    const era = eraOf(ctx);
    const view = taskView(era, sealTaskId(deps.taskKey, task), task, { status: 'working' });
    return era === '2025' ? { task: view } : { resultType: 'task', ...view };
  });

  server.server.setRequestHandler('tasks/get', { params: taskIdParams }, async ({ taskId }, ctx) => {
    gate(ctx);
    const task = taskOf(taskId);
    const state = await currentState(deps.api, task, ctx.mcpReq);
    const view = taskView(eraOf(ctx), taskId, task, state);
    // 2026-07-28 inlines the result of a completed task; 2025-11-25 has tasks/result for it.
    return eraOf(ctx) === '2026' && state.status === 'completed' ? { ...view, result: state.result } : view;
  });

  // 2025-11-25 only (the SDK answers it "method not found" on 2026-07-28, where tasks/get carries the result).
  server.server.setRequestHandler('tasks/result', { params: taskIdParams }, async ({ taskId }, ctx): Promise<CallToolResult> => {
    const task = taskOf(taskId);
    const { result } = await finalState(deps.api, task, { signal: ctx.mcpReq.signal, logger: deps.logger });
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });

  // 2026-07-28: the extension's answer to a task waiting for input. A wait_for_reply task never
  // asks for any, so an update of a live task of this caller is acknowledged and changes nothing.
  server.server.setRequestHandler('tasks/update', { params: taskIdParams }, ({ taskId }, ctx) => {
    if (eraOf(ctx) === '2025') {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'tasks/update is a method of the 2026-07-28 tasks extension');
    }
    gate(ctx);
    taskOf(taskId);
    return {};
  });

  server.server.setRequestHandler('tasks/cancel', { params: taskIdParams }, ({ taskId }, ctx) => {
    if (eraOf(ctx) === '2025') {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        'tasks/cancel is not offered (no tasks.cancel capability): a wait_for_reply task holds nothing between polls and ends at its deadline; stop polling it instead',
      );
    }
    gate(ctx);
    taskOf(taskId);
    return {};
  });
}
