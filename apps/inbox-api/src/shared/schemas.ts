import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import { paginationQuery } from '@repo/http';
import { isUuid } from './ids.js';

/**
 * Paging of every list: `limit` with `offset` (and `total`), as lists always took them, or a
 * cursor: `page_token` in, `next_page_token` out. A cursor is the sort key of the last item of the
 * page before (keyset), so pages neither skip nor repeat items when others are written meanwhile;
 * an item whose sort key changes meanwhile (a thread's last activity) moves, and a walk already past
 * its new place does not list it.
 */
export const pageTokenQuery = {
  page_token: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .meta({ description: 'The `next_page_token` of the page before: continues after its last item (then `offset` must be 0)' }),
};

/** limit (default 50, at most 200), offset and page_token, as GET /v1/messages takes them. */
export const pageQuery = {
  ...paginationQuery({ defaultLimit: 50, maxLimit: 200, offsetName: 'offset' }),
  ...pageTokenQuery,
};

/** A page of a list: `items`, how many are on this page, how many match overall, the cursor to the next page. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    count: z.number().int(),
    total: z.number().int(),
    next_page_token: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `page_token` for the page after this one; null on the last page' }),
  });
}

export interface Page<T> {
  items: T[];
  count: number;
  total: number;
  next_page_token: string | null;
}

export function page<T>(items: T[], total: number, nextPageToken: string | null = null): Page<T> {
  return { items, count: items.length, total, next_page_token: nextPageToken };
}

/**
 * A sort key's values: strings, numbers, big integers (event ids) or timestamps (carried as ISO
 * strings); booleans for what a first page fixed of those after it (search).
 */
export type KeyValue = string | number | bigint | Date | boolean;

type KeyShape = 'date' | 'string' | 'uuid' | 'number' | 'bigint' | 'boolean';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// What the key columns hold: timestamps of years 1 to 9999 (Postgres holds more, JavaScript's ISO
// text beyond is signed), int8.
const EARLIEST_KEY_DATE = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_KEY_DATE = Date.parse('9999-12-31T23:59:59.999Z');

/** A time the timestamp columns can be compared with: years 1 to 9999 in UTC. */
export const isStorableDate = (date: Date) => date.getTime() >= EARLIEST_KEY_DATE && date.getTime() <= LATEST_KEY_DATE;
const INT8 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/**
 * The opaque cursor after an item: the list's name (a token of one list is refused by another)
 * and the item's sort key, base64url-encoded JSON.
 */
export function encodePageToken(list: string, key: KeyValue[]): string {
  const values = key.map((value) =>
    value instanceof Date ? { t: value.toISOString() } : typeof value === 'bigint' ? { b: value.toString() } : value,
  );
  return Buffer.from(JSON.stringify([list, ...values])).toString('base64url');
}

/**
 * The sort key a page_token carries, checked against the list and the key's shape (`'date'`,
 * `'string'`, `'uuid'`, `'number'`, `'bigint'`, `'boolean'` per column) and what its column can hold, so that
 * no forged token reaches the database (a non-UUID id, a year 275,000 date, a bigint past int8
 * made it fail: 500); undefined without a token. 400 when it is not one of ours, or when it comes
 * with an offset.
 */
export function decodePageToken(
  query: { page_token?: string; offset?: number },
  list: string,
  shape: readonly KeyShape[],
): KeyValue[] | undefined {
  if (query.page_token === undefined) return undefined;
  if (query.offset) throw new BadRequestError('Pass either page_token or offset, not both', { offset: query.offset });
  const invalid = () => new BadRequestError('page_token is not a token this list gave', { page_token: query.page_token });
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(query.page_token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded[0] !== list || decoded.length !== shape.length + 1) throw invalid();
  const values = decoded as unknown[];
  return shape.map((kind, index): KeyValue => {
    const value = values[index + 1];
    if (kind === 'date') {
      const iso = (value as { t?: unknown } | null)?.t;
      const date = typeof iso === 'string' ? new Date(iso) : undefined;
      if (!date || !isStorableDate(date)) throw invalid();
      return date;
    }
    if (kind === 'bigint') {
      const digits = (value as { b?: unknown } | null)?.b;
      if (typeof digits !== 'string' || !/^-?\d{1,19}$/.test(digits)) throw invalid();
      const number = BigInt(digits);
      if (number < INT8.min || number > INT8.max) throw invalid();
      return number;
    }
    if (kind === 'boolean') {
      if (typeof value !== 'boolean') throw invalid();
      return value;
    }
    if (kind === 'uuid') {
      if (typeof value !== 'string' || !UUID.test(value)) throw invalid();
      return value;
    }
    if (
      kind === 'number'
        ? typeof value !== 'number' || !Number.isFinite(value)
        : // A NUL is no text Postgres holds: compared with a column, it fails the statement.
          typeof value !== 'string' || value.length > 200 || value.includes('\u0000')
    ) {
      throw invalid();
    }
    return value as KeyValue;
  });
}

/**
 * A page from `limit + 1` rows read in sort order: the first `limit`, and the cursor after the
 * last of them when there was one more.
 */
export function keysetPage<T>(
  rows: T[],
  limit: number,
  list: string,
  keyOf: (row: T) => KeyValue[],
): { items: T[]; next: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last !== undefined ? encodePageToken(list, keyOf(last)) : null };
}

/**
 * A Prisma `where` for the rows after `key` in descending order of `fields`: (a, b) < (x, y) as
 * `a < x OR (a = x AND b < y)`; an empty condition without a key.
 */
export function afterKeyDesc(fields: readonly string[], key: KeyValue[] | undefined): Record<string, unknown> {
  if (!key) return {};
  return {
    OR: fields.map((field, index) => ({
      ...Object.fromEntries(fields.slice(0, index).map((earlier, i) => [earlier, key[i]])),
      [field]: { lt: key[index] },
    })),
  };
}

/**
 * Identifiers are UUIDs; anything else cannot name a record and is simply not found (and is named in
 * the 404 as given). A UUID is lower-cased, as Postgres writes it: scopes and caches compare ids as
 * strings, and its hex digits name the same record in either case.
 */
export const id = z
  .string()
  .min(1)
  .max(100)
  .overwrite((value) => (isUuid(value) ? value.toLowerCase() : value));

export const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC timestamp' });

/** A display name: trimmed, 1 to 200 characters, without line breaks or other control characters. */
export function displayName(meta: { description: string; example: string }) {
  return (
    z
      .string()
      .trim()
      .min(1)
      .max(200, { abort: true })
      // A name may become a From display name: no line breaks or other control characters.
      .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain line breaks or other control characters' })
      .meta(meta)
  );
}

/** The newest-first sort of most lists: created_at, then id (a UUID). */
export const NEWEST_FIRST = { fields: ['createdAt', 'id'], shape: ['date', 'uuid'] } as const;

/**
 * One page of a list in descending order of `sort.fields`: `read` gets the keyset condition (a
 * Prisma `where` part, empty on a first page), how many rows to take (one more than `limit`, to
 * know whether a page follows), how many to skip and the key itself (for SQL of its own);
 * `count` the total. With `page_token` the
 * page starts after the token's item, otherwise at `offset`.
 */
export async function readPage<T>(
  query: { limit: number; offset?: number; page_token?: string },
  list: string,
  sort: { fields: readonly string[]; shape: readonly KeyShape[] },
  read: (after: Record<string, unknown>, take: number, skip: number, key: KeyValue[] | undefined) => Promise<T[]>,
  count: () => Promise<number>,
): Promise<{ rows: T[]; total: number; next: string | null }> {
  const key = decodePageToken(query, list, sort.shape);
  const [rows, total] = await Promise.all([
    read(afterKeyDesc(sort.fields, key), query.limit + 1, key ? 0 : (query.offset ?? 0), key),
    count(),
  ]);
  const keyOf = (row: T) => sort.fields.map((field) => (row as Record<string, KeyValue>)[field]!);
  const { items, next } = keysetPage(rows, query.limit, list, keyOf);
  return { rows: items, total, next };
}
