import { z } from 'zod';
import { crashTestSettings, httpSettings, setting, storageSettings } from '@repo/config';
import { checkStorageBackendSettings, storageBackendSettings } from '@repo/storage';
import { checkLlmSettings, llmSettings } from './adapters/llm/index.js';
import { checkMailSettings, mailSettings } from './adapters/mail/index.js';
import { webhookSettings } from './webhooks/settings.js';
import { webhookOutSettings } from './webhooks-out/settings.js';

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
        'Operator keys, comma-separated: every permission on every organization, and the only keys that create organizations. When set, every /v1 request needs `Authorization: Bearer <key>` with one of them or an API key of an organization (`inbx_…`, from POST /v1/api-keys); unset, the API is open: a request without a key acts as an operator.',
      ),
    INBOX_RATE_LIMIT_PER_MINUTE: setting
      .integer({ min: 0 })
      .default(600)
      .describe(
        'Requests per minute per API key (per client address when the API is open); 0 disables the limit. An organization API key may set its own (`rate_limit_per_minute`).',
      ),
    INBOX_SEND_LIMIT_PER_HOUR: setting
      .integer({ min: 0 })
      .default(100)
      .describe(
        'Messages each inbox may send per hour, and each organization API key unless it sets its own (`send_limit_per_hour`); 0 disables the limit.',
      ),
    INBOX_SEND_LIMIT_PER_DAY: setting
      .integer({ min: 0 })
      .default(1000)
      .describe('Messages each inbox may send per day (a fixed 24-hour window, as the hourly one); 0 disables the limit.'),
    INBOX_NEW_RECIPIENT_LIMIT_PER_DAY: setting
      .integer({ min: 0 })
      .default(200)
      .describe(
        'Distinct new recipients (addresses the inbox has never sent to) each inbox may write to in 24 hours; past it, a send with another new recipient answers 429. 0 disables the limit.',
      ),
    INBOX_AUTH_FAILURES_PER_MINUTE: setting
      .integer({ min: 0 })
      .default(10)
      .describe(
        'Requests with a wrong or missing API key answered 401 per client address per minute; past it, they get 429 until the minute ends. A right key is always let through. 0 disables the limit.',
      ),
    INBOX_SEND_LEASE_SECONDS: setting
      .integer({ min: 1, max: 86_400 })
      .default(120)
      .describe(
        'How long a send may stay `sending` before it is taken for interrupted (its process stopped) and resolved by the reconciler. Keep it well above the provider timeout (30 s).',
      ),
    INBOX_RECONCILE_INTERVAL_SECONDS: setting
      .integer({ min: 0, max: 86_400 })
      .default(60)
      .describe(
        'How often the reconciler resolves interrupted sends and removes what a crash left behind (it also runs at start-up); 0: at start-up only.',
      ),
    INBOX_MAX_ATTACHMENT_BYTES: setting
      .integer({ min: 1 })
      .default(25 * 1024 * 1024)
      .describe('Largest total size of the attachments of one message, in bytes (decoded); larger sends answer 413.'),
    INBOX_INLINE_ATTACHMENT_BYTES: setting
      .integer({ min: 0, max: 1024 * 1024 })
      .default(8 * 1024)
      .describe(
        'In a mail of more than 16 attachments, those of at most this many bytes (decoded) are kept in their own database row instead of the object store: one commit stores them, with no file write each (a mail of 10,000 tiny attachments). A mail of fewer keeps every attachment in the object store. At most 1 MiB; 0: every attachment goes to the object store.',
      ),
    INBOX_DOWNLOAD_URL_TTL_SECONDS: setting
      .integer({ min: 60, max: 604_800 })
      .default(3600)
      .describe(
        'How long the `download_url` of an attachment works, in seconds (at most 7 days, the limit of Cloud Storage signed URLs).',
      ),
    INBOX_DOWNLOAD_URL_SECRET: setting
      .string()
      .optional()
      .describe(
        'Key that signs the download links of attachments in `local` or `database` storage (HMAC-SHA256), e.g. `openssl rand -base64 32`; replicas need the same one. Unset: a key generated in DATA_DIR.',
      ),
    INBOX_CONTENT_THREADS: setting
      .integer({ min: 1, max: 64 })
      .default(2)
      .describe(
        'Worker threads that render and clean large message bodies and parse received mail off the event loop (under 4 KB, done inline).',
      ),
    INBOX_CONTENT_NICE: setting
      .integer({ min: 0, max: 19 })
      .default(10)
      .describe(
        'How much lower the content workers run than the event loop, as a nice increment (Linux): on a machine with few cores, a worker busy with a large mail then leaves the CPU to the event loop, which answers every request. 0: the same priority.',
      ),
    INBOX_CONTENT_TIMEOUT_MS: setting
      .integer({ min: 100, max: 600_000 })
      .default(30_000)
      .describe(
        'Longest time rendering, cleaning or parsing one message may take, counted as the CPU time of its worker (time spent waiting for a core is not counted, up to four times this in all). A message to send that takes longer is refused with 400 (`content_too_complex`); received mail is stored all the same, with a fallback `content_clean` or, when it could not be parsed, as it came.',
      ),
    INBOX_EVENT_RETENTION_DAYS: setting
      .integer({ min: 1, max: 3650 })
      .default(30)
      .describe(
        'Days events are kept (GET /v1/events and its stream): older ones are no longer listed and are removed by the reconciler, and a cursor at or below the newest removed, or older than that, answers 410.',
      ),
    REDIS_URL: setting
      .url({ protocols: ['redis:', 'rediss:'] })
      .optional()
      .describe('Redis for rate-limit counters, so that replicas share them. Unset: counted in each process.'),
    ...storageBackendSettings(),
    ...mailSettings(),
    ...webhookSettings(),
    ...webhookOutSettings(),
    ...llmSettings(),
    ...crashTestSettings(),
  })
  .superRefine((config, ctx) => {
    checkStorageBackendSettings(config, ctx);
    checkMailSettings(config, ctx);
    checkLlmSettings(config, ctx);
  });

export type Config = z.output<typeof configSchema>;
