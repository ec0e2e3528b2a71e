import { z } from 'zod';
import { httpSettings, setting, storageSettings } from '@repo/config';

/** Every environment variable inbox-api reads. The README's configuration table mirrors this. */
export const configSchema = z.object({
  ...httpSettings({ port: 8000 }),
  ...storageSettings(),
  INBOX_EMAIL_DOMAIN: setting
    .string()
    .default('inbox.localhost')
    .describe('Mail domain of every inbox: its address is `<email_username>@<INBOX_EMAIL_DOMAIN>`.'),
});

export type Config = z.output<typeof configSchema>;
