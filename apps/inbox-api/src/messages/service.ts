import { BadRequestError, NotFoundError } from '@repo/errors';
import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import { type Message, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { isUuid } from '../shared/ids.js';
import { page, type Page } from '../shared/schemas.js';
import { findThread } from '../threads/service.js';
import { changeLabels, fixedLabelsTouched } from './labels.js';
import { toMessageResponse } from './records.js';
import type { MessageResponse, SearchItem } from './schemas.js';
import { containsPattern } from './search.js';

interface ListQuery {
  inbox_id?: string;
  thread_id?: string;
  q?: string;
  limit: number;
  offset: number;
}

/**
 * Messages of an inbox and/or a thread, newest first; with `q`, the search subset of those that
 * match. The inbox and thread must be within the scope (404 otherwise), which keeps the list in it.
 */
export async function listMessages(
  db: Database,
  scope: Scope,
  query: ListQuery,
): Promise<Page<MessageResponse> | Page<SearchItem>> {
  const filters = await resolveFilters(db, scope, query);
  if (query.q !== undefined) return searchMessages(db, filters, query.q, query);
  const where = { ...(filters.inboxId && { inboxId: filters.inboxId }), ...(filters.threadId && { threadId: filters.threadId }) };
  const [messages, total] = await Promise.all([
    db.message.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: query.limit, skip: query.offset }),
    db.message.count({ where }),
  ]);
  return page(messages.map(toMessageResponse), total);
}

/** Checks the filters name existing records within the scope (404 otherwise) that belong together. */
async function resolveFilters(db: Database, scope: Scope, query: ListQuery): Promise<{ inboxId?: string; threadId?: string }> {
  const inbox = query.inbox_id !== undefined ? await findInbox(db, scope, query.inbox_id) : undefined;
  const thread =
    query.thread_id !== undefined ? await findThread(db, scope, { threadId: query.thread_id, inboxId: inbox?.id }) : undefined;
  return { inboxId: inbox?.id, threadId: thread?.id };
}

interface SearchRow {
  id: string;
  thread_id: string;
  inbox_id: string;
  subject: string;
  from_address: string;
  text: string;
  content_clean: string;
  created_at: Date;
}

/**
 * Case-insensitive substring search over the messages' search text (subject, sender, text body,
 * attachment filenames) in the narrow message_search table; only the page's rows are read from
 * the wide messages table. The page and the total are separate queries, run side by side, so
 * that each gets its own plan: the page stops at `limit` matches newest first when the term is
 * common, and the count uses the per-inbox trigram index when it is selective (bench/run.ts).
 */
async function searchMessages(
  db: Database,
  filters: { inboxId?: string; threadId?: string },
  q: string,
  paging: { limit: number; offset: number },
): Promise<Page<SearchItem>> {
  const conditions = [Prisma.sql`search_text LIKE ${containsPattern(q)}`];
  if (filters.inboxId) conditions.push(Prisma.sql`inbox_id = ${filters.inboxId}::uuid`);
  if (filters.threadId) conditions.push(Prisma.sql`thread_id = ${filters.threadId}::uuid`);
  const where = Prisma.join(conditions, ' AND ');
  const [rows, [count]] = await Promise.all([
    db.$queryRaw<SearchRow[]>`
      SELECT m.id, m.thread_id, m.inbox_id, m.subject, m.from_address, m.text, m.content_clean, m.created_at
        FROM (SELECT message_id, created_at
                FROM message_search
               WHERE ${where}
               ORDER BY created_at DESC, message_id DESC
               LIMIT ${paging.limit} OFFSET ${paging.offset}) AS page
        JOIN messages m ON m.id = page.message_id
       ORDER BY page.created_at DESC, page.message_id DESC`,
    db.$queryRaw<{ total: bigint }[]>`SELECT count(*) AS total FROM message_search WHERE ${where}`,
  ]);
  return page(
    rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })),
    Number(count?.total ?? 0),
  );
}

/** The message, or 404 (also in an inbox being deleted, or outside the scope). */
export async function findMessage(db: Database, scope: Scope, messageId: string): Promise<Message> {
  const message = isUuid(messageId)
    ? await db.message.findFirst({ where: { id: messageId, inbox: { deletedAt: null, ...inboxFilter(scope) } } })
    : null;
  if (!message) throw new NotFoundError('Message not found', { message_id: messageId });
  return message;
}

export async function getMessage(db: Database, scope: Scope, messageId: string): Promise<MessageResponse> {
  return toMessageResponse(await findMessage(db, scope, messageId));
}

/**
 * Adds and removes labels (remove wins), under the message's row lock so that concurrent changes
 * all apply. `received` and `sent` say what the message is: a change naming them is refused (400).
 */
export async function updateMessageLabels(
  db: Database,
  scope: Scope,
  messageId: string,
  change: { add_labels?: string[]; remove_labels?: string[] },
): Promise<MessageResponse> {
  const found = await findMessage(db, scope, messageId);
  const fixed = fixedLabelsTouched({ add: change.add_labels, remove: change.remove_labels });
  if (fixed.length > 0) throw new BadRequestError(`Labels ${fixed.join(', ')} are set by the service`, { labels: fixed });
  const updated = await db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ labels: string[] }[]>`SELECT labels FROM messages WHERE id = ${found.id}::uuid FOR UPDATE`;
    if (!row) throw new NotFoundError('Message not found', { message_id: messageId });
    const labels = changeLabels(row.labels, { add: change.add_labels, remove: change.remove_labels });
    if (labels.length > MAX_LABELS_PER_MESSAGE) {
      throw new BadRequestError(`A message has at most ${MAX_LABELS_PER_MESSAGE} labels`, { labels: labels.length });
    }
    return tx.message.update({ where: { id: found.id }, data: { labels } });
  });
  return toMessageResponse(updated);
}

const MAX_LABELS_PER_MESSAGE = 100;
