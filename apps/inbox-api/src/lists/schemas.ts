import { z } from 'zod';
import { id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';
import { LIST_DIRECTIONS, LIST_TYPES, normaliseListEntry } from './rules.js';

export const createListEntryBody = z
  .object({
    organization_id: id
      .optional()
      .meta({ description: 'The organization whose list it is (every inbox of it); or give `inbox_id`' }),
    inbox_id: id.optional().meta({ description: 'The inbox whose list it is; or give `organization_id`' }),
    direction: z
      .enum(LIST_DIRECTIONS)
      .meta({ description: '`send`: recipients of sent mail; `receive`: senders of received mail' }),
    type: z.enum(LIST_TYPES),
    entry: z
      .string()
      .max(320, { abort: true })
      .transform((value, ctx) => {
        const parsed = normaliseListEntry(value);
        if (!parsed) {
          ctx.addIssue({ code: 'custom', message: 'Must be an e-mail address (name@example.com) or a domain (example.com)' });
          return z.NEVER;
        }
        return parsed.entry;
      })
      .meta({ description: 'An address or a domain (its subdomains too); stored lower-case', example: 'example.com' }),
  })
  .strict()
  .refine((body) => (body.organization_id === undefined) !== (body.inbox_id === undefined), {
    error: 'Give exactly one of organization_id and inbox_id',
  });
export type CreateListEntryInput = z.output<typeof createListEntryBody>;

export const listEntriesQuery = z
  .object({
    organization_id: id.optional().meta({ description: 'Entries of this organization (its own and its inboxes’)' }),
    inbox_id: id.optional().meta({ description: 'Entries of this inbox' }),
    direction: z.enum(LIST_DIRECTIONS).optional(),
    type: z.enum(LIST_TYPES).optional(),
    ...pageQuery,
  })
  .strict();
export type ListEntriesQuery = z.output<typeof listEntriesQuery>;

export const listEntryParams = z.object({ entry_id: id });

export const listEntrySchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    inbox_id: z.string().nullable().meta({ description: "Null: the organization's list, for every inbox of it" }),
    direction: z.enum(LIST_DIRECTIONS),
    type: z.enum(LIST_TYPES),
    entry: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'ListEntry' });
export type ListEntryResponse = z.input<typeof listEntrySchema>;

export const listEntryPage = pageOf(listEntrySchema).meta({ id: 'ListEntryPage' });
