import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { containsPattern } from '../messages/search.js';
import { page, type Page, readPage } from '../shared/schemas.js';
import type { SearchQuery, SearchResult } from './schemas.js';
import { renderEscapedSnippet, START_MARK, STOP_MARK, substringSnippet } from './snippet.js';

/** The text search configuration of message_search.search_vector (its migration). */
const CONFIG = Prisma.sql`'english'::regconfig`;
/** What an exact (substring) match adds to the full-text rank, which lies in [0, 1). */
const SUBSTRING_BONUS = 0.1;
/** ts_headline reads this much of a body at most. */
const SNIPPET_SOURCE_CHARS = 20_000;

interface ScoredRow {
  id: string;
  score: number;
  created_at: Date;
}

interface ResultRow {
  id: string;
  thread_id: string;
  inbox_id: string;
  direction: 'inbound' | 'outbound';
  subject: string;
  from_address: string;
  labels: string[];
  created_at: Date;
  headline: string;
  text: string;
}

/**
 * One search over every inbox of the scope (or those named, each within it: 404 otherwise),
 * most relevant first: a message matches when its full-text vector matches `q`
 * (websearch_to_tsquery, `english`) or when `q` occurs in its search text as a substring (the
 * trigram index, for parts of words and addresses). Score: ts_rank_cd normalised to [0, 1)
 * (subject words weigh more), plus SUBSTRING_BONUS for the exact text; ties newest first. Paged by
 * keyset on (score, created_at, id), or by offset.
 */
export async function search(db: Database, scope: Scope, query: SearchQuery): Promise<Page<SearchResult>> {
  const inboxIds = await inboxesToSearch(db, scope, query.inbox_ids);
  if (inboxIds.length === 0) return page([], 0);
  const tsquery = Prisma.sql`websearch_to_tsquery(${CONFIG}, ${query.q})`;
  const pattern = containsPattern(query.q);
  const conditions = [
    Prisma.sql`s.inbox_id = ANY(${inboxIds}::uuid[])`,
    Prisma.sql`(s.search_vector @@ ${tsquery} OR s.search_text LIKE ${pattern})`,
  ];
  if (query.after) conditions.push(Prisma.sql`s.created_at > ${query.after}::timestamptz`);
  if (query.before) conditions.push(Prisma.sql`s.created_at < ${query.before}::timestamptz`);
  if (query.labels) {
    conditions.push(
      Prisma.sql`EXISTS (SELECT FROM messages m WHERE m.id = s.message_id AND m.labels @> ${query.labels}::text[])`,
    );
  }
  const where = Prisma.join(conditions, ' AND ');
  const { rows, total, next } = await readPage(
    query,
    'search',
    { fields: ['score', 'created_at', 'id'], shape: ['number', 'date', 'string'] },
    (_after, take, skip, key) => db.$queryRaw<ScoredRow[]>`
      SELECT id, score, created_at FROM (
        SELECT s.message_id AS id, s.created_at,
               (ts_rank_cd(s.search_vector, ${tsquery}, 32)
                + CASE WHEN s.search_text LIKE ${pattern} THEN ${SUBSTRING_BONUS}::float8 ELSE 0 END)::float8 AS score
          FROM message_search s
         WHERE ${where}) AS scored
       ${key ? Prisma.sql`WHERE (score, created_at, id) < (${key[0]}::float8, ${key[1]}::timestamptz, ${key[2]}::uuid)` : Prisma.empty}
       ORDER BY score DESC, created_at DESC, id DESC
       LIMIT ${take} OFFSET ${skip}`,
    async () =>
      Number(
        (await db.$queryRaw<{ total: bigint }[]>`SELECT count(*) AS total FROM message_search s WHERE ${where}`)[0]?.total ?? 0,
      ),
  );
  const details = await resultRows(
    db,
    rows.map((row) => row.id),
    query.q,
  );
  return page(
    rows.flatMap((row) => {
      const message = details.get(row.id);
      return message ? [toResult(message, row.score, query.q)] : [];
    }),
    total,
    next,
  );
}

/** The ids of the inboxes to search: those named (each reachable, 404 otherwise), or every live one in the scope. */
async function inboxesToSearch(db: Database, scope: Scope, named: string[] | undefined): Promise<string[]> {
  if (named) return Promise.all([...new Set(named)].map(async (inboxId) => (await findInbox(db, scope, inboxId)).id));
  const inboxes = await db.inbox.findMany({ where: { deletedAt: null, ...inboxFilter(scope) }, select: { id: true } });
  return inboxes.map((inbox) => inbox.id);
}

/** The page's messages, with ts_headline's marked passage of each text body. */
async function resultRows(db: Database, ids: string[], q: string): Promise<Map<string, ResultRow>> {
  if (ids.length === 0) return new Map();
  const options = `StartSel="${START_MARK}", StopSel="${STOP_MARK}", MaxWords=35, MinWords=15, MaxFragments=2, FragmentDelimiter=" … "`;
  const rows = await db.$queryRaw<ResultRow[]>`
    SELECT m.id, m.thread_id, m.inbox_id, m.direction::text AS direction, m.subject, m.from_address, m.labels, m.created_at,
           left(m.text, ${SNIPPET_SOURCE_CHARS}) AS text,
           ts_headline(${CONFIG}, ${escapedSql(Prisma.sql`regexp_replace(left(m.text, ${SNIPPET_SOURCE_CHARS}), '[\uE000\uE001]', '', 'g')`)},
                       websearch_to_tsquery(${CONFIG}, ${q}), ${options}) AS headline
      FROM messages m
     WHERE m.id = ANY(${ids}::uuid[])`;
  return new Map(rows.map((row) => [row.id, row]));
}

/** `text` HTML-escaped in SQL, as snippet.ts's escapeHtml does. */
function escapedSql(text: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`replace(replace(replace(replace(replace(${text}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')`;
}

function toResult(row: ResultRow, score: number, q: string): SearchResult {
  return {
    id: row.id,
    thread_id: row.thread_id,
    inbox_id: row.inbox_id,
    direction: row.direction,
    subject: row.subject,
    from_address: row.from_address,
    labels: row.labels,
    created_at: row.created_at.toISOString(),
    score,
    snippet: row.headline.includes(START_MARK) ? renderEscapedSnippet(row.headline) : substringSnippet(row.text, q),
  };
}
