import { z } from 'zod';
import { httpSettings, storageSettings } from '@repo/config';

/** Every environment variable collab-api reads. The README's configuration table mirrors this. */
export const configSchema = z.object({
  ...httpSettings({ port: 8100 }),
  ...storageSettings(),
});

export type Config = z.output<typeof configSchema>;
