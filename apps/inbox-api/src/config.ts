import { z } from 'zod';
import { httpSettings, setting, storageSettings } from '@repo/config';

/** Every environment variable inbox-api reads. The README's configuration table mirrors this. */
export const configSchema = z.object({
  ...httpSettings({ port: 8000 }),
  ...storageSettings(),
  /** Domain of every inbox address: `<email_username>@<INBOX_EMAIL_DOMAIN>`. */
  INBOX_EMAIL_DOMAIN: setting.string().default('inbox.localhost'),
});

export type Config = z.output<typeof configSchema>;
