/**
 * Narrower views of inbox-api's generated response shapes (src/api-schemas.ts), for the answers
 * whose shape depends on the query: GET /v1/messages answers full messages, or with `q` the
 * search subset; GET /v1/events restricted to `message.received` carries messages.
 */
import { z } from 'zod';
import {
  draftSchema,
  eventPageSchema,
  eventSchema,
  messagePageSchema,
  messageSchema,
  messageSearchItemSchema,
  sendMessageResultSchema,
} from './api-schemas.js';

export const EVENT_TYPES = eventSchema.shape.type.options;

/** GET /v1/messages without `q`. */
export const messageListSchema = messagePageSchema.extend({ items: z.array(messageSchema) });

/** GET /v1/messages with `q`. */
export const searchPageSchema = messagePageSchema.extend({ items: z.array(messageSearchItemSchema) });

/** GET /v1/events?types=message.received: `data` is the message as the list shows it. */
export const receivedEventPageSchema = eventPageSchema.extend({
  items: z.array(eventSchema.extend({ type: z.literal('message.received'), data: messageSchema })),
});

/**
 * What a sending tool answers: the sent message's fields, or, where the inbox's `send_policy` is
 * `approval`, only `draft` (the send held as a draft pending approval).
 */
export const sendOutcomeSchema = sendMessageResultSchema.partial().extend({
  draft: draftSchema
    .optional()
    .describe('Present, alone, when the inbox requires approval: the mail was not sent and awaits approval as this draft'),
});
