import { z } from 'zod';
import { paginationQuery } from '@repo/http';

/** limit (default 50, at most 200) and offset, as GET /v1/messages takes them. */
export const pageQuery = paginationQuery({ defaultLimit: 50, maxLimit: 200, offsetName: 'offset' });

/** A page of a list: `items`, how many are on this page, how many match overall. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), count: z.number().int(), total: z.number().int() });
}

export interface Page<T> {
  items: T[];
  count: number;
  total: number;
}

export function page<T>(items: T[], total: number): Page<T> {
  return { items, count: items.length, total };
}

/** Identifiers are UUIDs; anything else cannot name a record and is simply not found. */
export const id = z.string().min(1).max(100);

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
