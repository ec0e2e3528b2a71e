import { z } from 'zod';
import { displayName, id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';

/**
 * An e-mail local part as RFC 5322 allows it unquoted (dot-atom): letters, digits and
 * ``!#$%&'*+/=?^_`{|}~-``, with single dots between them; at most 64 characters.
 */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

export const createInboxBody = z
  .object({
    name: displayName({ description: 'Display name', example: 'Support agent' }),
    email_username: z
      .string()
      .trim()
      .min(1)
      .max(64, { abort: true })
      .regex(LOCAL_PART, {
        error: "Must be an e-mail local part: letters, digits, . and !#$%&'*+/=?^_`{|}~- (no leading, trailing or double dots)",
      })
      .transform((value) => value.toLowerCase())
      .meta({ description: 'Local part of the address; stored lower-case', example: 'support' }),
    organization_id: id.optional().meta({
      description:
        "The organization the inbox belongs to. Omitted: the API key's own organization, or `default` for operator keys and when the service runs without keys.",
    }),
  })
  .strict();

export type CreateInboxInput = z.output<typeof createInboxBody>;

export const inboxParams = z.object({ inbox_id: id });

const sendPolicy = z.enum(['direct', 'approval']).meta({
  description:
    '`direct`: sends go at once; `approval`: every send (POST /v1/messages, reply, forward, draft send) becomes a draft ' +
    'pending approval (202), sent once a key with `approve` approves it',
});

export const updateInboxBody = z
  .object({
    name: displayName({ description: 'Display name', example: 'Support agent' }).optional(),
    sending_enabled: z.boolean().optional().meta({
      description: 'Kill switch: false, and every send from the inbox answers 403 `sending_disabled`; scheduled drafts wait',
    }),
    send_policy: sendPolicy.optional(),
  })
  .strict();

export type UpdateInboxInput = z.output<typeof updateInboxBody>;

export const listInboxesQuery = z.object(pageQuery).strict();

export const inboxSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email_address: z.string(),
    organization_id: z.string(),
    sending_enabled: z.boolean().meta({ description: 'The inbox’s kill switch (PATCH /v1/inboxes/{inbox_id})' }),
    send_policy: sendPolicy,
    created_at: timestamp,
  })
  .meta({ id: 'Inbox' });

export type InboxResponse = z.input<typeof inboxSchema>;

export const inboxPage = pageOf(inboxSchema).meta({ id: 'InboxPage' });
