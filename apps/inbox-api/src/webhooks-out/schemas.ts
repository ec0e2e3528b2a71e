import { z } from 'zod';
import { EVENT_TYPES } from '../events/log.js';
import { id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';

/** An http(s) URL a receiver listens at; where it may point is checked by the service (net-guard rules). */
const receiverUrl = z
  .string()
  .trim()
  .max(2000, { abort: true })
  .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\//, { error: 'Must be an http or https URL', abort: true })
  .superRefine((value, ctx) => {
    if ([...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f))
      ctx.addIssue({ code: 'custom', message: 'Must not contain control characters' });
    else if (!URL.canParse(value)) ctx.addIssue({ code: 'custom', message: 'Must be a valid URL' });
    else if (new URL(value).username !== '' || new URL(value).password !== '')
      ctx.addIssue({ code: 'custom', message: 'Must not contain a user name or password' });
  })
  .meta({
    description:
      'Where deliveries are POSTed (http or https). Hosts that are loopback, private, link-local or cloud metadata addresses (or resolve to one) are refused, unless INBOX_WEBHOOK_ALLOW_PRIVATE allows private and loopback ones.',
    example: 'https://agent.example.com/hooks/inbox',
  });

const eventTypes = z
  .array(z.enum(EVENT_TYPES, { error: `Must be an event type: ${EVENT_TYPES.join(', ')}` }))
  .min(1)
  .max(EVENT_TYPES.length * 4)
  .transform((types) => [...new Set(types)])
  .meta({ description: `The event types delivered: ${EVENT_TYPES.join(', ')}` });

const inboxIds = z
  .array(id)
  .min(1)
  .max(100)
  .transform((ids) => [...new Set(ids)]);

export const createWebhookBody = z
  .object({
    url: receiverUrl,
    event_types: eventTypes,
    inbox_ids: inboxIds.optional().meta({
      description: "Only these inboxes' events. Omitted: every inbox of the organization, new ones included.",
    }),
    organization_id: id.optional().meta({
      description:
        "The webhook's organization. Omitted: the API key's own; for operator keys, that of `inbox_ids` (all of one), or `default` without them.",
    }),
  })
  .strict();
export type CreateWebhookInput = z.output<typeof createWebhookBody>;

export const updateWebhookBody = z
  .object({
    url: receiverUrl.optional(),
    event_types: eventTypes.optional(),
    inbox_ids: inboxIds.nullable().optional().meta({ description: 'null: every inbox of the organization' }),
    enabled: z.boolean().optional().meta({
      description:
        'false pauses deliveries (events meanwhile are not delivered); true enables it again and clears disabled_reason',
    }),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { error: 'Give at least one of url, event_types, inbox_ids, enabled' });
export type UpdateWebhookInput = z.output<typeof updateWebhookBody>;

export const webhookParams = z.object({ webhook_id: id });
export const deliveryParams = z.object({ webhook_id: id, delivery_id: id });

export const listWebhooksQuery = z.object(pageQuery).strict();
export const listDeliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']).optional().meta({ description: 'Only deliveries in this state' }),
    ...pageQuery,
  })
  .strict();

export const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.enum(EVENT_TYPES)),
    inbox_ids: z.array(z.string()).nullable().meta({ description: 'null: every inbox of the organization' }),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why the service disabled it (a delivery failed for the whole retry schedule); null while enabled' }),
    organization_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'Webhook' });
export type WebhookResponse = z.input<typeof webhookSchema>;

export const createdWebhookSchema = webhookSchema
  .extend({
    secret: z.string().meta({
      description:
        'The signing secret (`whsec_` + base64), shown only here. Verify deliveries with any Standard Webhooks verifier: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64-decoded part after `whsec_`.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
  })
  .meta({ id: 'CreatedWebhook' });
export type CreatedWebhookResponse = z.input<typeof createdWebhookSchema>;

export const webhookPage = pageOf(webhookSchema).meta({ id: 'WebhookPage' });

const attemptSchema = z.object({
  at: timestamp,
  status_code: z.number().int().nullable().meta({ description: 'null: no HTTP answer (timeout, refused, connection closed)' }),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
});

export const deliverySchema = z
  .object({
    id: z.string().meta({ description: 'Also the `webhook-id` header of every attempt' }),
    webhook_id: z.string(),
    event_id: z.number().int(),
    event_type: z.enum(EVENT_TYPES).nullable().meta({ description: 'null once the event is past its retention' }),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_attempt_at: timestamp.nullable(),
    next_attempt_at: timestamp.nullable().meta({ description: 'When the next attempt is due while pending; null otherwise' }),
    delivered_at: timestamp.nullable(),
    created_at: timestamp,
    attempt_log: z.array(attemptSchema).meta({ description: 'The attempts, oldest first (the last 20)' }),
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryResponse = z.input<typeof deliverySchema>;
export type AttemptRecord = z.input<typeof attemptSchema>;

export const deliveryPage = pageOf(deliverySchema).meta({ id: 'WebhookDeliveryPage' });
