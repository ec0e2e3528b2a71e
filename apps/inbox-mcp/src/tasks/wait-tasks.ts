import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Logger } from '@repo/http';
import { type InboxApiClient, InboxApiError } from '../api-client.js';
import { errorResult } from '../tools/results.js';
import {
  isTransient,
  nextReceived,
  type ReceivedEvent,
  repliedResult,
  threadLogHead,
  timedOutResult,
} from '../tools/wait-for-reply.js';
import type { WaitTask } from './task-id.js';

/** How often clients are asked to poll `tasks/get`: each poll is one REST call, answered at once. */
export const POLL_INTERVAL_MS = 5_000;
/** How long a task id still answers after its deadline, for a client that polls late. */
export const RETENTION_AFTER_DEADLINE_MS = 60 * 60 * 1000;

/** Where a task stands: still waiting, or done with the tool's result (and since when). */
export type CompletedState = { status: 'completed'; result: CallToolResult; at: number };
export type TaskState = { status: 'working' } | CompletedState;

/** The new task for a wait of `timeoutSeconds` on a thread, by the caller `caller`: its log's cursor now. */
export async function startWaitTask(
  api: InboxApiClient,
  wait: { threadId: string; timeoutSeconds: number; caller: string },
  options: { signal: AbortSignal },
): Promise<WaitTask> {
  const created = Date.now();
  const after = await threadLogHead(api, wait.threadId, options);
  // Whole milliseconds: the sealed id holds integers, and a fraction (timeout_seconds 2.0001) made an id that never opened.
  const deadline = created + Math.ceil(wait.timeoutSeconds * 1000);
  return { thread: wait.threadId, after, created, deadline, caller: wait.caller };
}

/** Until when a task id answers, in ms since the epoch. */
export function expiresAt(task: WaitTask): number {
  return task.deadline + RETENTION_AFTER_DEADLINE_MS;
}

/**
 * A task's state from the first `message.received` after its cursor (if any) and the time. A
 * message counts when inbox-api logged it by the deadline, so the answer never changes once given:
 * a reply logged later leaves a task that timed out timed out.
 */
export function stateOf(task: WaitTask, firstReceived: ReceivedEvent | undefined, now: number): TaskState {
  const waited = (until: number) => (until - task.created) / 1000;
  const receivedAt = firstReceived && Date.parse(firstReceived.created_at);
  if (firstReceived && receivedAt !== undefined && receivedAt <= task.deadline) {
    return { status: 'completed', result: repliedResult(task.thread, waited(receivedAt), firstReceived.data), at: receivedAt };
  }
  if (now >= task.deadline)
    return { status: 'completed', result: timedOutResult(task.thread, waited(task.deadline)), at: task.deadline };
  return { status: 'working' };
}

/** An error of the API that ends a task (the thread is gone, the cursor expired), as the tool's error result. */
function failedState(error: InboxApiError): CompletedState {
  return { status: 'completed', result: errorResult(error.code, error.message, error.details), at: Date.now() };
}

/**
 * The state now, from one read of the event log that does not wait. A failure worth retrying
 * (the API away for a moment) is thrown: the poll fails and the next one asks again.
 */
export async function currentState(api: InboxApiClient, task: WaitTask, options: { signal: AbortSignal }): Promise<TaskState> {
  try {
    const page = await api.receivedEvents({ thread_id: task.thread, after: task.after, limit: 1 }, options);
    return stateOf(task, page.items[0], Date.now());
  } catch (error) {
    if (error instanceof InboxApiError && !isTransient(error)) return failedState(error);
    throw error;
  }
}

/** The final state, waiting for it (long polls of the event log) until a reply or the deadline. */
export async function finalState(
  api: InboxApiClient,
  task: WaitTask,
  options: { signal: AbortSignal; logger: Logger },
): Promise<CompletedState> {
  let event: ReceivedEvent | undefined;
  try {
    event = await nextReceived(api, { threadId: task.thread, after: task.after, deadline: task.deadline }, options);
  } catch (error) {
    if (error instanceof InboxApiError && !isTransient(error)) return failedState(error);
    throw error;
  }
  const state = event && stateOf(task, event, Date.now());
  if (state?.status === 'completed') return state;
  // None by the deadline (or one logged after it, by inbox-api's clock): past the deadline, the
  // log says which, and the state is final.
  await sleep(Math.max(0, task.deadline - Date.now()), undefined, { signal: options.signal });
  const last = await currentState(api, task, options);
  if (last.status !== 'completed') throw new Error('wait_for_reply task: still working past its deadline');
  return last;
}
