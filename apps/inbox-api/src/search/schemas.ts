import { z } from 'zod';
import { messageFilters } from '../messages/schemas.js';
import { id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';

/**
 * Postgres parses `q` (websearch_to_tsquery) with a stack of 32 operators: each `-` of a run that
 * only spaces and ( ) ! | & < separate nests one more negation, and 33 of them fail the statement
 * ("tsquery stack too small"). Half of that leaves room for what else the text nests.
 */
export const MAX_NEGATIONS_IN_A_ROW = 16;

export function negationsTooDeep(q: string): boolean {
  return (q.match(/[-\s()!|&<]+/g) ?? []).some((run) => run.split('-').length - 1 > MAX_NEGATIONS_IN_A_ROW);
}

export const searchQuery = z
  .object({
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain control characters' })
      .refine((q) => !negationsTooDeep(q), {
        error: `Must not hold more than ${MAX_NEGATIONS_IN_A_ROW} \`-\` (negations) in a row (spaces and ( ) ! | & < between them do not break the row)`,
      })
      .meta({
        description:
          'Words to find (web-search syntax: `"a phrase"`, `-word`, `or`), also matched as a case-insensitive substring ' +
          'for parts of words and addresses',
        example: 'invoice march',
      }),
    inbox_ids: z
      .union([z.string(), z.array(z.string()).max(100)])
      .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(',')))
      .pipe(z.array(id).min(1).max(100))
      .optional()
      .meta({ description: 'Only these inboxes (comma-separated); default: every inbox in the key’s scope' }),
    labels: messageFilters.labels,
    after: messageFilters.after,
    before: messageFilters.before,
    ...pageQuery,
  })
  .strict();

export type SearchQuery = z.output<typeof searchQuery>;

const searchResultSchema = z
  .object({
    id: z.string(),
    thread_id: z.string(),
    inbox_id: z.string(),
    direction: z.enum(['inbound', 'outbound']),
    subject: z.string(),
    from_address: z.string(),
    labels: z.array(z.string()),
    created_at: timestamp,
    score: z.number().meta({ description: 'Relevance: higher is better (full-text rank, plus a bonus for the exact text)' }),
    snippet: z.string().meta({
      description:
        'A passage of the text body around the matches (the subject, when only it matches), HTML-escaped (`&`, `<`, `>`, `"`, `\'` as entities); the only ' +
        'markup is `<mark>` … `</mark>` around each match. Safe to insert as HTML; for plain text, remove the two tags ' +
        'and unescape the entities.',
    }),
  })
  .meta({ id: 'SearchResult' });

export type SearchResult = z.input<typeof searchResultSchema>;

export const searchPage = pageOf(searchResultSchema)
  .extend({
    total: z.number().int().meta({
      description: 'How many matches the search ranks and lists: all of them, or the newest 200 when more match',
    }),
    total_is_lower_bound: z.boolean().meta({
      description:
        'True when more messages match than `total`: only the newest 200 matches are ranked and listed; narrow the ' +
        'search (`before`, `after`, `inbox_ids`, `labels`, more words) to reach older ones',
    }),
  })
  .meta({
    id: 'SearchPage',
    description: 'Matches, most relevant first (then newest), among the newest 200 matches',
  });

export type SearchPage = z.input<typeof searchPage>;
