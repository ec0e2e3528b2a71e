import { z } from 'zod';
import { paginationQuery } from '@repo/http/pagination';

/** `skip` and `limit` of every list (default 0 and 100, `limit` at most 1000). */
export const listQuery = z.strictObject(paginationQuery({ defaultLimit: 100, maxLimit: 1000, offsetName: 'skip' }));

export type ListOptions = z.output<typeof listQuery>;

/** The order of every list and of any choice among several records: oldest first, ties by id; with `page`, that page. */
export function oldestFirst(page?: ListOptions) {
  return { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }], skip: page?.skip, take: page?.limit };
}

/** Path parameters that carry record ids: UUIDs, 422 when malformed. */
export function idParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, z.uuid()])) as Record<K, z.ZodUUID>);
}

// C0 and C1 control characters, DEL included: they have no place in a name and hide in logs and UIs.
const CONTROL_CHARACTERS = /[\p{Cc}]/u;

/** A name people type: trimmed, 1 to `max` characters, no control characters. */
export function displayName(max = 200) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((value) => !CONTROL_CHARACTERS.test(value), {
      message: 'Must not contain control characters',
      params: { type: 'string_pattern_mismatch' },
    });
}

/** A free-text description; empty means none. */
export const description = z
  .string()
  .max(4000)
  .transform((value) => (value.trim() === '' ? null : value));

/**
 * One of `values`. Read as a string first, so that a missing value is reported like any other
 * missing field (`missing`, "Field required"); zod's enum alone reports it as an invalid option.
 */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V) {
  return z
    .string()
    .pipe(z.enum(values))
    .meta({ enum: [...values] });
}

export const email = z
  .email()
  .max(254)
  .transform((value) => value.toLowerCase())
  .meta({ description: 'Stored and compared lower-cased', example: 'ada@example.com' });

export const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC timestamp' });

/** A file's bytes, as the OpenAPI document shows a body or an answer that is a file. */
export const fileBytes = z.string().meta({ format: 'binary' });

/**
 * The query of this service's own signed links (upload and download links of local storage): the
 * link is the credential, an HMAC over its path and expiry under COLLAB_UPLOAD_URL_SECRET. A link
 * without them is refused as one with a wrong signature is (403), not as a malformed request.
 */
export const signedLinkQuery = z.object({
  expires: z.string().default('').meta({ description: 'When the link stops working, in seconds since 1970 (UTC); absent: 403' }),
  token: z
    .string()
    .default('')
    .meta({ description: "The link's signature over its path and `expires` (HMAC-SHA256, base64url); absent: 403" }),
});

/** `archived_at` of a record the API shows: always null, since archived records are not shown. */
export const archivedAt = timestamp
  .nullable()
  .meta({ description: 'Set when the record is deleted; deleted records are never returned' });

export function iso(date: Date): string {
  return date.toISOString();
}

export function isoOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
