import { z } from 'zod';
import { httpSettings, setting, storageSettings } from '@repo/config';
import { checkStorageBackendSettings, storageBackendSettings } from '@repo/storage';
import { checkMailSettings, mailSettings } from './adapters/mail/index.js';

/** Every environment variable inbox-api reads. The README's configuration table mirrors this. */
export const configSchema = z
  .object({
    ...httpSettings({ port: 8000 }),
    ...storageSettings(),
    INBOX_EMAIL_DOMAIN: setting
      .string()
      .default('inbox.localhost')
      .describe('Mail domain of every inbox: its address is `<email_username>@<INBOX_EMAIL_DOMAIN>`.'),
    INBOX_API_KEYS: setting
      .list()
      .optional()
      .describe(
        'API keys, comma-separated. When set, every /v1 request needs `Authorization: Bearer <key>`; unset, the API is open.',
      ),
    INBOX_RATE_LIMIT_PER_MINUTE: setting
      .integer({ min: 0 })
      .default(600)
      .describe('Requests per minute per API key (per client address when the API is open); 0 disables the limit.'),
    INBOX_SEND_LIMIT_PER_HOUR: setting
      .integer({ min: 0 })
      .default(100)
      .describe('Messages each inbox may send per hour; 0 disables the limit.'),
    INBOX_MAX_ATTACHMENT_BYTES: setting
      .integer({ min: 1 })
      .default(25 * 1024 * 1024)
      .describe('Largest total size of the attachments of one message, in bytes (decoded); larger sends answer 413.'),
    REDIS_URL: setting
      .url({ protocols: ['redis:', 'rediss:'] })
      .optional()
      .describe('Redis for rate-limit counters, so that replicas share them. Unset: counted in each process.'),
    ...storageBackendSettings(),
    ...mailSettings(),
  })
  .superRefine((config, ctx) => {
    checkStorageBackendSettings(config, ctx);
    checkMailSettings(config, ctx);
  });

export type Config = z.output<typeof configSchema>;
