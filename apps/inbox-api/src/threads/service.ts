import { NotFoundError } from '@repo/errors';
import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import type { Prisma, Thread } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { likeLiteral } from '../messages/search.js';
import { isUuid } from '../shared/ids.js';
import { page, type Page, readPage } from '../shared/schemas.js';
import type { ListThreadsQuery, ThreadResponse, ThreadSummary } from './schemas.js';

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

export function toThreadSummary(thread: Thread, labels: string[] = []): ThreadSummary {
  return {
    id: thread.id,
    subject: thread.subject,
    last_message_at: thread.lastMessageAt.toISOString(),
    message_count: thread.messageCount,
    participants: thread.participants,
    labels,
    summary: thread.summary,
  };
}

/**
 * Threads of an inbox, newest activity first (last_message_at, then id), narrowed by filters that
 * their messages together must meet: every label among them, a message of the direction, from the
 * sender, with an attachment (or none at all); after/before bound the last activity.
 */
export async function listThreads(db: Database, scope: Scope, query: ListThreadsQuery): Promise<Page<ThreadSummary>> {
  const inbox = await findInbox(db, scope, query.inbox_id);
  const where: Prisma.ThreadWhereInput = {
    inboxId: inbox.id,
    AND: [
      ...(query.labels ?? []).map((label) => ({ messages: { some: { labels: { has: label } } } })),
      ...(query.direction ? [{ messages: { some: { direction: query.direction } } }] : []),
      ...(query.from !== undefined
        ? [{ messages: { some: { fromAddress: { contains: likeLiteral(query.from), mode: 'insensitive' as const } } } }]
        : []),
      ...(query.has_attachments === true ? [{ messages: { some: { attachments: { some: {} } } } }] : []),
      ...(query.has_attachments === false ? [{ messages: { none: { attachments: { some: {} } } } }] : []),
      ...(query.after || query.before
        ? [{ lastMessageAt: { ...(query.after && { gt: query.after }), ...(query.before && { lt: query.before }) } }]
        : []),
    ],
  };
  const { rows, total, next } = await readPage(
    query,
    'threads',
    { fields: ['lastMessageAt', 'id'], shape: ['date', 'uuid'] },
    (after, take, skip) =>
      db.thread.findMany({ where: { AND: [where, after] }, orderBy: [{ lastMessageAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.thread.count({ where }),
  );
  const labels = await threadLabels(
    db,
    rows.map((thread) => thread.id),
  );
  return page(
    rows.map((thread) => toThreadSummary(thread, labels.get(thread.id))),
    total,
    next,
  );
}

/** The union of the labels of each thread's messages, sorted. */
export async function threadLabels(db: Database, threadIds: string[]): Promise<Map<string, string[]>> {
  if (threadIds.length === 0) return new Map();
  const rows = await db.$queryRaw<{ thread_id: string; labels: string[] }[]>`
    SELECT m.thread_id, array_agg(DISTINCT label ORDER BY label) AS labels
      FROM messages m, unnest(m.labels) AS label
     WHERE m.thread_id = ANY(${threadIds}::uuid[])
     GROUP BY m.thread_id`;
  return new Map(rows.map((row) => [row.thread_id, row.labels]));
}

/** The newest message of a thread that its recipients got: what a reply answers. */
export function latestMessage(db: Database, threadId: string) {
  return db.message.findFirst({
    where: { threadId, status: { not: 'failed' } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { providerMessageId: true, references: true, inReplyTo: true },
  });
}
