import { z } from 'zod';
import { paginationQuery } from '@repo/http';
import { archivedAt, description, displayName, idParams, timestamp } from '../shared/schemas.js';

/** SQL as people write it: 1 to 100,000 characters, not blank, no NUL (which Postgres and DuckDB cannot hold). */
export const queryText = z
  .string()
  .max(100_000)
  .refine((value) => value.trim() !== '', { message: 'Must not be blank', params: { type: 'string_too_short' } })
  .refine((value) => !value.includes('\0'), {
    message: 'Must not contain NUL characters',
    params: { type: 'string_pattern_mismatch' },
  })
  .meta({
    description: 'DuckDB or BigQuery SQL naming tables as `dataset_name.table_name`',
    example: 'SELECT count(*) FROM sales.orders',
  });

export const querySchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    project_id: z.uuid(),
    query_text: z.string(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    created_at: timestamp,
    archived_at: archivedAt,
  })
  .meta({ id: 'Query' });

export type QueryResponse = z.input<typeof querySchema>;

export const queryList = z.object({ queries: z.array(querySchema) }).meta({ id: 'QueryList' });

export const queryParams = idParams('query_id');

/** What people call a saved query: 1 to 200 characters once trimmed, no control characters. */
const queryName = displayName().meta({ description: 'What the query is called (1 to 200 characters, trimmed)' });
const queryDescription = description.meta({ description: 'Notes on the query, up to 4,000 characters; "" means none' });

export const createQueryBody = z.strictObject({
  query_text: queryText,
  project_id: z.uuid(),
  name: queryName.nullish(),
  description: queryDescription.nullish(),
});

export type CreateQueryInput = z.output<typeof createQueryBody>;

export const updateQueryBody = z.strictObject({
  query_text: queryText.nullish().meta({ description: 'Absent or null keeps the text' }),
  project_id: z.uuid().nullish().meta({ description: 'Absent or null keeps the project' }),
  name: queryName.nullish().meta({ description: 'Absent keeps the name; null removes it' }),
  description: queryDescription.nullish().meta({ description: 'Absent keeps the description; null or "" removes it' }),
});

export type UpdateQueryInput = z.output<typeof updateQueryBody>;

export const queryListQuery = z.strictObject({
  project_id: z.uuid().optional().meta({ description: 'Only the queries of this project' }),
  ...paginationQuery({ defaultLimit: 100, maxLimit: 1000, offsetName: 'skip' }),
});
