import { z } from 'zod';
import { displayName, id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';
import { PERMISSIONS } from './scope.js';

const MAX_LIMIT = 1_000_000;

const limitSetting = (description: string) => z.number().int().min(0).max(MAX_LIMIT).nullable().optional().meta({ description });

export const createApiKeyBody = z
  .object({
    name: displayName({ description: 'What the key is for', example: 'Support agent' }),
    organization_id: id.optional().meta({
      description:
        "The key's organization. Omitted: the creating key's own; for operator keys, that of `inbox_ids` (all of one), or `default` without them.",
    }),
    inbox_ids: z.array(id).min(1).max(100).optional().meta({
      description: 'Limits the key to these inboxes of its organization. Omitted: every inbox of it, new ones included.',
    }),
    permissions: z
      .array(z.enum(PERMISSIONS))
      .max(PERMISSIONS.length * 4)
      .meta({
        description:
          '`read`: inboxes, threads, messages, attachments, search; `send`: send and reply; `manage`: create and delete inboxes ' +
          'and keys within its scope; `approve`: approve or reject drafts. Any subset, none included (a key that can only be refused).',
      }),
    rate_limit_per_minute: limitSetting(
      "Requests per minute with this key; 0: no limit. Omitted: the creating key's own; null (and for operator keys, omitted): INBOX_RATE_LIMIT_PER_MINUTE.",
    ),
    send_limit_per_hour: limitSetting(
      "Messages this key may send per hour (each inbox's own limit applies as well); 0: no limit. Omitted: the creating key's own; null (and for operator keys, omitted): INBOX_SEND_LIMIT_PER_HOUR.",
    ),
  })
  .strict();

export type CreateApiKeyInput = z.output<typeof createApiKeyBody>;

export const apiKeyParams = z.object({ api_key_id: id });

export const listApiKeysQuery = z
  .object({ organization_id: id.optional().meta({ description: "Only this organization's keys" }), ...pageQuery })
  .strict();

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    organization_id: z.string(),
    inbox_ids: z.array(z.string()).nullable().meta({ description: 'null: every inbox of the organization' }),
    permissions: z.array(z.enum(PERMISSIONS)),
    prefix: z
      .string()
      .meta({ description: 'The first 12 characters of the secret, to recognise it by', example: 'inbx_4Fq9XzA' }),
    rate_limit_per_minute: z.number().int().nullable().meta({ description: 'null: INBOX_RATE_LIMIT_PER_MINUTE' }),
    send_limit_per_hour: z.number().int().nullable().meta({ description: 'null: INBOX_SEND_LIMIT_PER_HOUR' }),
    created_at: timestamp,
    last_used_at: timestamp
      .nullable()
      .meta({ description: 'When a replica last looked the key up (to within 2 seconds); null: never used' }),
  })
  .meta({ id: 'ApiKey' });

export type ApiKeyResponse = z.input<typeof apiKeySchema>;

export const createdApiKeySchema = apiKeySchema
  .extend({
    key: z.string().meta({
      description:
        'The secret, shown this once: `inbx_` followed by 36 letters and digits. Send it as `Authorization: Bearer <key>`.',
    }),
  })
  .meta({ id: 'CreatedApiKey' });

export type CreatedApiKeyResponse = z.input<typeof createdApiKeySchema>;

export const apiKeyPage = pageOf(apiKeySchema).meta({ id: 'ApiKeyPage' });
