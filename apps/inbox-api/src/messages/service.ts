import { BadRequestError, NotFoundError } from '@repo/errors';
import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import { type Message, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import { findThread } from '../threads/service.js';
import { changeLabels, fixedLabelsTouched } from './labels.js';
import { toMessageResponse } from './records.js';
import type { MessageFilters, MessageResponse, SearchItem } from './schemas.js';
import { containsPattern, likeLiteral } from './search.js';

interface ListQuery extends MessageFilters {
  inbox_id?: string;
  thread_id?: string;
  q?: string;
  limit: number;
  offset: number;
  page_token?: string;
}

/**
 * Messages of an inbox and/or a thread, newest first, narrowed by the filters; with `q`, the
 * search subset of those that match. The inbox and thread must be within the scope (404
 * otherwise), which keeps the list in it.
 */
export async function listMessages(
  db: Database,
  scope: Scope,
  query: ListQuery,
): Promise<Page<MessageResponse> | Page<SearchItem>> {
  const filters = await resolveFilters(db, scope, query);
  if (query.q !== undefined) return searchMessages(db, filters, query.q, query);
  const where: Prisma.MessageWhereInput = {
    ...(filters.inboxId && { inboxId: filters.inboxId }),
    ...(filters.threadId && { threadId: filters.threadId }),
    ...messageWhere(query),
  };
  const { rows, total, next } = await readPage(
    query,
    'messages',
    NEWEST_FIRST,
    (after, take, skip) =>
      db.message.findMany({ where: { AND: [where, after] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.message.count({ where }),
  );
  return page(rows.map(toMessageResponse), total, next);
}

/** The filters of a message list as a Prisma condition (a thread list asks it of its messages). */
export function messageWhere(filters: MessageFilters): Prisma.MessageWhereInput {
  return {
    ...(filters.labels && { labels: { hasEvery: filters.labels } }),
    ...(filters.direction && { direction: filters.direction }),
    ...(filters.from !== undefined && { fromAddress: { contains: likeLiteral(filters.from), mode: 'insensitive' } }),
    ...((filters.after || filters.before) && {
      createdAt: { ...(filters.after && { gt: filters.after }), ...(filters.before && { lt: filters.before }) },
    }),
    ...(filters.has_attachments !== undefined && { attachments: filters.has_attachments ? { some: {} } : { none: {} } }),
  };
}

/** The same filters in SQL, on the messages row `m`. */
export function messageFilterSql(filters: MessageFilters): Prisma.Sql[] {
  const conditions: Prisma.Sql[] = [];
  if (filters.labels) conditions.push(Prisma.sql`m.labels @> ${filters.labels}::text[]`);
  if (filters.direction) conditions.push(Prisma.sql`m.direction = ${filters.direction}::"MessageDirection"`);
  if (filters.from !== undefined) conditions.push(Prisma.sql`lower(m.from_address) LIKE ${containsPattern(filters.from)}`);
  if (filters.after) conditions.push(Prisma.sql`m.created_at > ${filters.after}::timestamptz`);
  if (filters.before) conditions.push(Prisma.sql`m.created_at < ${filters.before}::timestamptz`);
  if (filters.has_attachments !== undefined) {
    const exists = Prisma.sql`EXISTS (SELECT FROM attachments a WHERE a.message_id = m.id)`;
    conditions.push(filters.has_attachments ? exists : Prisma.sql`NOT ${exists}`);
  }
  return conditions;
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
 * the wide messages table (and, with filters, the candidates' rows to check them). The page and
 * the total are separate queries, run side by side, so that each gets its own plan: the page
 * stops at `limit` matches newest first when the term is common, and the count uses the
 * per-inbox trigram index when it is selective (bench/run.ts).
 */
async function searchMessages(
  db: Database,
  filters: { inboxId?: string; threadId?: string },
  q: string,
  query: ListQuery,
): Promise<Page<SearchItem>> {
  const conditions = [Prisma.sql`search_text LIKE ${containsPattern(q)}`];
  if (filters.inboxId) conditions.push(Prisma.sql`inbox_id = ${filters.inboxId}::uuid`);
  if (filters.threadId) conditions.push(Prisma.sql`thread_id = ${filters.threadId}::uuid`);
  const onMessage = messageFilterSql(query);
  if (onMessage.length > 0) {
    conditions.push(
      Prisma.sql`EXISTS (SELECT FROM messages m WHERE m.id = message_search.message_id AND ${Prisma.join(onMessage, ' AND ')})`,
    );
  }
  const where = Prisma.join(conditions, ' AND ');
  const { rows, total, next } = await readPage(
    query,
    'messages',
    { fields: ['created_at', 'id'], shape: NEWEST_FIRST.shape },
    (_after, take, skip, key) => db.$queryRaw<SearchRow[]>`
      SELECT m.id, m.thread_id, m.inbox_id, m.subject, m.from_address, m.text, m.content_clean, m.created_at
        FROM (SELECT message_id, created_at
                FROM message_search
               WHERE ${where}${key ? Prisma.sql` AND (created_at, message_id) < (${key[0]}::timestamptz, ${key[1]}::uuid)` : Prisma.empty}
               ORDER BY created_at DESC, message_id DESC
               LIMIT ${take} OFFSET ${skip}) AS page
        JOIN messages m ON m.id = page.message_id
       ORDER BY page.created_at DESC, page.message_id DESC`,
    async () =>
      Number(
        (await db.$queryRaw<{ total: bigint }[]>`SELECT count(*) AS total FROM message_search WHERE ${where}`)[0]?.total ?? 0,
      ),
  );
  return page(
    rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })),
    total,
    next,
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
