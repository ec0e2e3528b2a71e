import { NotFoundError } from '@repo/errors';
import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import type { Thread } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { isUuid } from '../shared/ids.js';
import { page, type Page } from '../shared/schemas.js';
import type { ThreadResponse, ThreadSummary } from './schemas.js';

/**
 * The thread, or 404 (also in an inbox being deleted, or outside the scope); with `inboxId`, only
 * a thread of that inbox is found.
 */
export async function findThread(
  db: Database,
  scope: Scope,
  { threadId, inboxId }: { threadId: string; inboxId?: string },
): Promise<Thread> {
  const thread = isUuid(threadId)
    ? await db.thread.findFirst({ where: { id: threadId, inbox: { deletedAt: null, ...inboxFilter(scope) } } })
    : null;
  if (!thread || (inboxId !== undefined && thread.inboxId !== inboxId)) {
    throw new NotFoundError('Thread not found', { thread_id: threadId, ...(inboxId !== undefined && { inbox_id: inboxId }) });
  }
  return thread;
}

/**
 * The conversation view: messages oldest first, inbound as `user`, outbound as `assistant`.
 * Sends that failed are left out: the recipients never read them, and a model reading the
 * conversation must not take them for replies it gave (the message list still shows them).
 */
export async function getThread(db: Database, scope: Scope, threadId: string): Promise<ThreadResponse> {
  const thread = await findThread(db, scope, { threadId });
  const messages = await db.message.findMany({
    where: { threadId: thread.id, status: { not: 'failed' } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, direction: true, fromAddress: true, contentClean: true, timestamp: true },
  });
  return {
    id: thread.id,
    inbox_id: thread.inboxId,
    subject: thread.subject,
    last_message_at: thread.lastMessageAt.toISOString(),
    summary: thread.summary,
    messages: messages.map((message) => ({
      id: message.id,
      role: message.direction === 'inbound' ? 'user' : 'assistant',
      author: message.fromAddress,
      content: message.contentClean,
      timestamp: message.timestamp.toISOString(),
    })),
  };
}

export function toThreadSummary(thread: Thread): ThreadSummary {
  return {
    id: thread.id,
    subject: thread.subject,
    last_message_at: thread.lastMessageAt.toISOString(),
    message_count: thread.messageCount,
    participants: thread.participants,
    summary: thread.summary,
  };
}

/** Threads of an inbox, newest activity first. */
export async function listThreads(
  db: Database,
  scope: Scope,
  query: { inbox_id: string; limit: number; offset: number },
): Promise<Page<ThreadSummary>> {
  const inbox = await findInbox(db, scope, query.inbox_id);
  const where = { inboxId: inbox.id };
  const [threads, total] = await Promise.all([
    db.thread.findMany({ where, orderBy: [{ lastMessageAt: 'desc' }, { id: 'desc' }], take: query.limit, skip: query.offset }),
    db.thread.count({ where }),
  ]);
  return page(threads.map(toThreadSummary), total);
}

/** The newest message of a thread that its recipients got: what a reply answers. */
export function latestMessage(db: Database, threadId: string) {
  return db.message.findFirst({
    where: { threadId, status: { not: 'failed' } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { providerMessageId: true, references: true },
  });
}
