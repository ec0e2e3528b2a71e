import { queryInteger } from '@repo/http';
import { z } from 'zod';
import { id, timestamp } from '../shared/schemas.js';
import { EVENT_TYPES } from './log.js';

/** Event ids: positive integers in commit order, sent as decimal digits. */
const cursor = z
  .string()
  .regex(/^\d{1,18}$/, { error: 'Must be an event id (decimal digits)' })
  .transform((value) => BigInt(value));

/** `types=a,b`, `types=a&types=b`, or both. */
const typeList = z
  .union([z.string().max(1000), z.array(z.string().max(1000)).max(EVENT_TYPES.length)])
  .transform((value, ctx) => {
    const types = (Array.isArray(value) ? value : [value])
      .flatMap((part) => part.split(','))
      .map((type) => type.trim())
      .filter(Boolean);
    const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0) {
      ctx.addIssue({ code: 'custom', message: `Unknown event types: ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}` });
      return z.NEVER;
    }
    return types as (typeof EVENT_TYPES)[number][];
  })
  .meta({
    description: `Event types to include, comma-separated or the parameter repeated (default: all): ${EVENT_TYPES.join(', ')}`,
  });

const filters = {
  types: typeList.optional(),
  inbox_id: id.optional(),
  thread_id: id.optional(),
};

export const listEventsQuery = z
  .object({
    after: cursor
      .optional()
      .meta({ description: 'Events after this id (a `next_after` or an event `id`); absent: from the oldest kept' }),
    ...filters,
    limit: queryInteger({ min: 1, max: 500, default: 100, description: 'Events a page holds at most' }),
    wait: queryInteger({
      min: 0,
      max: 60,
      default: 0,
      description: 'Seconds to wait for a first matching event when there is none yet (at most 60)',
    }),
  })
  .strict();
export type ListEventsQuery = z.output<typeof listEventsQuery>;

export const streamEventsQuery = z
  .object({ after: cursor.optional().meta({ description: 'As for GET /v1/events; the Last-Event-ID header wins' }), ...filters })
  .strict();

export const streamEventsHeaders = z.object({
  'last-event-id': cursor.optional().meta({ description: 'The id of the last event received: the stream resumes after it' }),
});

export const eventSchema = z
  .object({
    id: z.number().int().meta({ description: 'Ordered by commit: an event committed later has a larger id' }),
    type: z.enum(EVENT_TYPES),
    created_at: timestamp,
    organization_id: z.string(),
    inbox_id: z.string(),
    thread_id: z.string().nullable(),
    message_id: z.string().nullable(),
    data: z
      .record(z.string(), z.unknown())
      .meta({ description: "The message's list view (message events) or the thread's (thread events)" }),
  })
  .meta({ id: 'Event' });
export type EventResponse = z.input<typeof eventSchema>;

export const eventPage = z
  .object({
    items: z.array(eventSchema),
    next_after: z
      .number()
      .int()
      .meta({ description: "The cursor for the next call: the last item's id, or `after` when there is none" }),
  })
  .meta({ id: 'EventPage' });
export type EventPage = z.input<typeof eventPage>;
