import { inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { containsPattern } from '../messages/search.js';
import { decodePageToken, keysetPage, page } from '../shared/schemas.js';
import type { SearchPage, SearchQuery, SearchResult } from './schemas.js';
import { resultSnippet, START_MARK, STOP_MARK } from './snippet.js';

/** The text search configuration of message_search.search_vector (its migration). */
const CONFIG = Prisma.sql`'english'::regconfig`;
/** What an exact (substring) match adds to the full-text rank, which lies in [0, 1). */
const SUBSTRING_BONUS = 0.1;
/** ts_headline reads this much of a body at most. */
const SNIPPET_SOURCE_CHARS = 20_000;

/** A row of the search query: the page's items (id null when nothing matched), each with what it shows. */
interface ScoredRow {
  id: string | null;
  score: number | null;
  created_at: Date | null;
  oldest_at: Date;
  oldest_id: string;
  newest_at: Date;
  newest_id: string;
  /** Whether the substring part ran: the full-text matches were at most the candidates. */
  substring_ran: boolean;
  total: number;
  matched: number;
  /** Null on the row read past the page (it only tells that a next page exists). */
  message: MessageColumns | null;
}

interface MessageColumns {
  thread_id: string;
  inbox_id: string;
  direction: 'inbound' | 'outbound';
  subject: string;
  from_address: string;
  labels: string[];
  text: string;
  headline: string;
  /** ts_headline of the subject, for a match in the subject only. */
  subject_headline: string;
}

/**
 * How many matches a search ranks at most: the newest ones (by created_at, then id). Ranking and
 * counting every match costs time in proportion to their number (650,000 for a common word over
 * a million messages); bounded, a search answers in milliseconds whatever the word. Older matches
 * are reached by narrowing the search (`before`, `inbox_ids`, `labels`, more words).
 */
export const SEARCH_CANDIDATES = 200;

/**
 * The page_token's key: the item's (score, created_at, id); then what the first page fixed of the
 * pages after it: its oldest and newest candidates' (created_at, id), whether its substring part
 * ran, and whether more matched than it ranked.
 */
const KEY_SHAPE = ['number', 'date', 'uuid', 'date', 'uuid', 'date', 'uuid', 'boolean', 'boolean'] as const;

/**
 * One search over every inbox of the scope (or those named, each within it: 404 otherwise),
 * most relevant first: a message matches when its full-text vector matches `q`
 * (websearch_to_tsquery, `english`, through the GIN index) or, while the full-text matches are
 * fewer than SEARCH_CANDIDATES, when `q` occurs in its search text as a substring (the trigram
 * index, for parts of words and addresses). The newest SEARCH_CANDIDATES matches are ranked:
 * ts_rank_cd normalised to [0, 1) (subject words weigh more), plus SUBSTRING_BONUS for the exact
 * text; ties newest first. `total` counts them, `total_is_lower_bound` says more match. Paged by
 * keyset on (score, created_at, id), the token also fixing the first page's range of candidates
 * (its oldest and newest) and whether its substring part ran, so that later pages rank the same
 * set, whatever arrives meanwhile (newer mail waits for a new search), or by offset.
 *
 * A word in about 1 % of messages would read every match's row (the GIN bitmap) or test ten thousands
 * newest first: the full-text matches are looked for among the newest messages first (windowStart,
 * estimated from the statistics by default; null for none), falling back to every message when fewer
 * than candidateCount + 1 match there, so the answer is the same.
 *
 * One statement (after the statistics' estimate), one round trip: the candidates are narrow (id, created_at, tid: wide rows
 * through the sorts cost more than reading 200 rows again by tid), and only the page's items
 * are joined to `messages` for their snippet.
 */
export async function search(
  db: Database,
  scope: Scope,
  query: SearchQuery,
  candidateCount = SEARCH_CANDIDATES,
  windowStart?: Date | null,
): Promise<SearchPage> {
  const inboxIds = await inboxesToSearch(db, scope, query.inbox_ids);
  const key = decodePageToken(query, 'search', KEY_SHAPE);
  if (inboxIds.length === 0) return { ...page([], 0), total_is_lower_bound: false };
  // Later pages are bounded by the range of candidates their token fixes.
  const start = key ? null : windowStart === undefined ? await estimatedWindowStart(db, query.q, candidateCount) : windowStart;
  const tsquery = Prisma.sql`websearch_to_tsquery(${CONFIG}, ${query.q})`;
  const pattern = containsPattern(query.q);
  const filters = [Prisma.sql`s.inbox_id = ANY(${inboxIds}::uuid[])`];
  if (query.after) filters.push(Prisma.sql`s.created_at > ${query.after}::timestamptz`);
  if (query.before) filters.push(Prisma.sql`s.created_at < ${query.before}::timestamptz`);
  if (query.labels) {
    filters.push(Prisma.sql`EXISTS (SELECT FROM messages m WHERE m.id = s.message_id AND m.labels @> ${query.labels}::text[])`);
  }
  // Later pages rank the candidates of the first: those from its oldest to its newest.
  if (key) {
    filters.push(Prisma.sql`(s.created_at, s.message_id) >= (${key[3]}::timestamptz, ${key[4]}::uuid)`);
    filters.push(Prisma.sql`(s.created_at, s.message_id) <= (${key[5]}::timestamptz, ${key[6]}::uuid)`);
  }
  const where = Prisma.join(filters, ' AND ');
  // A later page ranks at most twice the candidates: the first page's, and room for mail that committed
  // among them after it; a forged token that widens the range gets no more.
  const bound = key ? 2 * candidateCount : candidateCount;
  const limit = Prisma.sql`LIMIT ${key ? bound : candidateCount + 1}`;
  // The first page runs the substring part when the full-text matches are all among its candidates; later pages as it did.
  const substringRuns = key ? Prisma.sql`${key[7]}::boolean` : Prisma.sql`(SELECT count(*) FROM full_text) <= ${candidateCount}`;
  const skip = key ? 0 : (query.offset ?? 0);
  const fullTextMatches = (condition: Prisma.Sql) => Prisma.sql`
      SELECT s.message_id, s.created_at, s.ctid AS tid FROM message_search s
       WHERE ${condition} AND ${where} AND s.search_vector @@ ${tsquery}
       ORDER BY s.created_at DESC, s.message_id DESC ${limit}`;
  // More than candidateCount full-text matches newer than the window's start are the newest of all (the
  // GIN bitmap ANDed with the created_at index reads only those); fewer, and every match is read as without it.
  const fullText = start
    ? Prisma.sql`windowed AS MATERIALIZED (${fullTextMatches(Prisma.sql`s.created_at > ${start}::timestamptz`)}
    ), full_text AS MATERIALIZED (
      SELECT * FROM windowed WHERE (SELECT count(*) FROM windowed) > ${candidateCount}
      UNION ALL
      (${fullTextMatches(Prisma.sql`(SELECT count(*) FROM windowed) <= ${candidateCount}`)}))`
    : Prisma.sql`full_text AS MATERIALIZED (${fullTextMatches(Prisma.sql`true`)})`;
  const rows = await db.$queryRaw<ScoredRow[]>`
    WITH ${fullText}, substring AS MATERIALIZED (
      -- Runs only when full_text holds every full-text match: leaving those out de-duplicates.
      SELECT s.message_id, s.created_at, s.ctid AS tid FROM message_search s
       WHERE ${substringRuns} AND ${where} AND s.search_text LIKE ${pattern}
         AND (s.search_vector @@ ${tsquery}) IS NOT TRUE
       ORDER BY s.created_at DESC, s.message_id DESC ${limit}
    ), matches AS MATERIALIZED (
      SELECT * FROM (SELECT * FROM full_text UNION ALL SELECT * FROM substring) AS m
       ORDER BY created_at DESC, message_id DESC ${limit}
    ), candidates AS MATERIALIZED (
      SELECT * FROM matches
       ORDER BY created_at DESC, message_id DESC LIMIT ${bound}
    ), oldest AS (
      SELECT created_at, message_id FROM candidates ORDER BY created_at, message_id LIMIT 1
    ), newest AS (
      SELECT created_at, message_id FROM candidates ORDER BY created_at DESC, message_id DESC LIMIT 1
    ), scored AS (
      -- Back to each candidate's row by its tid (no index lookup): the statement's one snapshot sees the same row.
      SELECT c.message_id AS id, c.created_at,
             (ts_rank_cd(s.search_vector, ${tsquery}, 32)
              + CASE WHEN s.search_text LIKE ${pattern} THEN ${SUBSTRING_BONUS}::float8 ELSE 0 END)::float8 AS score
        FROM candidates c JOIN message_search s ON s.ctid = c.tid
    )
    SELECT p.id, p.score, p.created_at, o.created_at AS oldest_at, o.message_id AS oldest_id,
           n.created_at AS newest_at, n.message_id AS newest_id, ${substringRuns} AS substring_ran,
           (SELECT count(*) FROM candidates)::int AS total, (SELECT count(*) FROM matches)::int AS matched,
           ${messageJson(query.q)} AS message
      FROM oldest o CROSS JOIN newest n
      LEFT JOIN LATERAL (
        SELECT *, row_number() OVER (ORDER BY score DESC, created_at DESC, id DESC) AS position FROM scored
         ${key ? Prisma.sql`WHERE (score, created_at, id) < (${key[0]}::float8, ${key[1]}::timestamptz, ${key[2]}::uuid)` : Prisma.empty}
         ORDER BY score DESC, created_at DESC, id DESC
         LIMIT ${query.limit + 1} OFFSET ${skip}
      ) AS p ON true
      -- The row past the page only tells that there is a next page: no snippet for it.
      LEFT JOIN messages m ON m.id = p.id AND p.position <= ${skip + query.limit}
     ORDER BY p.position`;
  const first = rows[0];
  const total = first?.total ?? 0;
  const totalIsLowerBound = key ? (key[8] as boolean) : (first?.matched ?? 0) > total;
  const scored = rows.filter((row): row is ScoredRow & { id: string; score: number; created_at: Date } => row.id !== null);
  const { items, next } = keysetPage(scored, query.limit, 'search', (row) => [
    row.score,
    row.created_at,
    row.id,
    row.oldest_at,
    row.oldest_id,
    row.newest_at,
    row.newest_id,
    row.substring_ran,
    totalIsLowerBound,
  ]);
  const results = items.flatMap((row) => (row.message ? [toResult(row, row.message, query.q)] : []));
  return { ...page(results, total, next), total_is_lower_bound: totalIsLowerBound };
}

/** A window aims at this many times the candidates it needs, as the statistics are estimates. */
const WINDOW_MARGIN = 2;
/**
 * Wider windows save nothing: the created_at index's bitmap costs more than reading the word's rows
 * (measured: a word in 0.24 % of messages would need the newest 17 %, and its 2,367 rows take 3 ms).
 */
const MAX_WINDOW_SHARE = 0.1;
/**
 * More frequent words are found fast newest first (201 / frequency rows tested: 2,300 in 3 ms for a word
 * in 8.6 % of messages), and the planner would AND their large GIN bitmap with the window's instead (16 ms).
 */
const MAX_WINDOW_FREQUENCY = 0.03;

/** What the window's estimate reads of the table's statistics (pg_stats). */
interface SearchStatistics {
  /** Frequency (share of rows) of each word in `most_common_elems` of search_vector. */
  frequencies: Map<string, number>;
  /** The `created_at` histogram, oldest to newest. */
  bounds: Date[];
  rows: number;
}

/**
 * How long a process reuses the statistics it read. They change only when the table is analysed
 * (autovacuum), and a stale estimate costs speed, never a different answer; reading pg_stats on
 * every search cost about 1 ms of Postgres time, mostly planning the view.
 */
const STATISTICS_TTL_MS = 5 * 60_000;
const statisticsCache = new WeakMap<Database, { readAt: number; statistics: Promise<SearchStatistics | null> }>();

function searchStatistics(db: Database): Promise<SearchStatistics | null> {
  const cached = statisticsCache.get(db);
  if (cached && Date.now() - cached.readAt < STATISTICS_TTL_MS) return cached.statistics;
  const statistics = readSearchStatistics(db);
  statisticsCache.set(db, { readAt: Date.now(), statistics });
  // A failed read is not kept: the next search tries again.
  statistics.catch(() => statisticsCache.delete(db));
  return statistics;
}

async function readSearchStatistics(db: Database): Promise<SearchStatistics | null> {
  const [row] = await db.$queryRaw<{ elems: string[] | null; freqs: number[] | null; bounds: Date[] | null; rows: number }[]>`
    SELECT v.most_common_elems::text::text[] AS elems, v.most_common_elem_freqs::float8[] AS freqs,
           c.histogram_bounds::text::timestamptz[] AS bounds,
           (SELECT reltuples FROM pg_class WHERE oid = 'message_search'::regclass)::float8 AS rows
      FROM pg_stats v JOIN pg_stats c ON c.schemaname = v.schemaname AND c.tablename = v.tablename
     WHERE v.schemaname = current_schema() AND v.tablename = 'message_search'
       AND v.attname = 'search_vector' AND c.attname = 'created_at'`;
  if (!row?.elems || !row.freqs || !row.bounds || row.bounds.length < 2) return null;
  // most_common_elem_freqs lists the elements' frequencies first, then three summary figures.
  const freqs = row.freqs;
  return { frequencies: new Map(row.elems.map((elem, i) => [elem, freqs[i]!])), bounds: row.bounds, rows: row.rows };
}

/**
 * Where a search's window of the newest messages starts so that it likely holds twice candidateCount
 * full-text matches of `q`, from the table's statistics (no scan; read once per STATISTICS_TTL_MS):
 * the frequency of its rarest word (a word not in `most_common_elems` is rarer than those listed: no
 * window) and the `created_at` histogram. Null when the window would not help. An estimate only: a
 * window holding too few matches falls back to the search without it.
 */
async function estimatedWindowStart(db: Database, q: string, candidateCount: number): Promise<Date | null> {
  const statistics = await searchStatistics(db);
  if (!statistics) return null;
  // The words as the index holds them (stemmed by the same configuration).
  const [{ lexemes }] = await db.$queryRaw<[{ lexemes: string[] }]>`
    SELECT tsvector_to_array(to_tsvector(${CONFIG}, ${q})) AS lexemes`;
  if (lexemes.length === 0) return null;
  const frequency = Math.min(...lexemes.map((lexeme) => statistics.frequencies.get(lexeme) ?? 0));
  return windowStartFrom(statistics.bounds, frequency, statistics.rows, WINDOW_MARGIN * (candidateCount + 1));
}

/**
 * The histogram bound (oldest to newest, equal shares of the rows between them) past which `wanted`
 * matches of a word in `frequency` of `rowCount` rows likely lie; null when the window would not help.
 */
export function windowStartFrom(bounds: Date[], frequency: number, rowCount: number, wanted: number): Date | null {
  const share = wanted / (frequency * rowCount);
  if (frequency > MAX_WINDOW_FREQUENCY || !(share <= MAX_WINDOW_SHARE)) return null;
  const buckets = bounds.length - 1;
  return bounds[buckets - Math.ceil(share * buckets)] ?? null;
}

/** The ids of the inboxes to search: those named (each reachable, 404 otherwise), or every live one in the scope. */
async function inboxesToSearch(db: Database, scope: Scope, named: string[] | undefined): Promise<string[]> {
  if (named) return Promise.all([...new Set(named)].map(async (inboxId) => (await findInbox(db, scope, inboxId)).id));
  const inboxes = await db.inbox.findMany({ where: { deletedAt: null, ...inboxFilter(scope) }, select: { id: true } });
  return inboxes.map((inbox) => inbox.id);
}

/** An item's message (`m`) as one JSON object, with ts_headline's marked passage of its text body; null without one. */
function messageJson(q: string): Prisma.Sql {
  const options = `StartSel="${START_MARK}", StopSel="${STOP_MARK}", MaxWords=35, MinWords=15, MaxFragments=2, FragmentDelimiter=" … "`;
  const subjectOptions = `StartSel="${START_MARK}", StopSel="${STOP_MARK}", HighlightAll=true`;
  const text = Prisma.sql`left(m.text, ${SNIPPET_SOURCE_CHARS})`;
  return Prisma.sql`CASE WHEN m.id IS NOT NULL THEN json_build_object(
      'thread_id', m.thread_id, 'inbox_id', m.inbox_id, 'direction', m.direction, 'subject', m.subject,
      'from_address', m.from_address, 'labels', m.labels, 'text', ${text},
      'headline', ts_headline(${CONFIG}, ${escapedSql(Prisma.sql`regexp_replace(${text}, '[\uE000\uE001]', '', 'g')`)},
                              websearch_to_tsquery(${CONFIG}, ${q}), ${options}),
      'subject_headline', ts_headline(${CONFIG}, ${escapedSql(Prisma.sql`regexp_replace(m.subject, '[\uE000\uE001]', '', 'g')`)},
                              websearch_to_tsquery(${CONFIG}, ${q}), ${subjectOptions})) END`;
}

/** `text` HTML-escaped in SQL, as snippet.ts's escapeHtml does. */
function escapedSql(text: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`replace(replace(replace(replace(replace(${text}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')`;
}

function toResult(row: { id: string; score: number; created_at: Date }, message: MessageColumns, q: string): SearchResult {
  return {
    id: row.id,
    thread_id: message.thread_id,
    inbox_id: message.inbox_id,
    direction: message.direction,
    subject: message.subject,
    from_address: message.from_address,
    labels: message.labels,
    created_at: row.created_at.toISOString(),
    score: row.score,
    snippet: resultSnippet(
      { headline: message.headline, text: message.text, subjectHeadline: message.subject_headline, subject: message.subject },
      q,
    ),
  };
}
