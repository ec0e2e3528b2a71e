import { setting } from '@repo/config';
import type { z } from 'zod';

/** The load jobs' environment variables, to spread into the app's configuration schema. */
export function loadJobSettings() {
  return {
    COLLAB_LOAD_MAX_UPLOAD_BYTES: setting
      .integer({ min: 1, max: 5 * 1024 ** 3 })
      .default(100 * 1024 * 1024)
      .describe(
        'Largest file `POST /load_job/` takes in the request (413 above); larger files go through the presigned upload URL.',
      ),
    COLLAB_LOAD_UPLOAD_URL_TTL_SECONDS: setting
      .integer({ min: 60, max: 604_800 })
      .default(3600)
      .describe(
        'How long the presigned upload URL of a load job works, in seconds (at most 7 days, the limit of Cloud Storage signed URLs).',
      ),
    COLLAB_UPLOAD_URL_SECRET: setting
      .string()
      .optional()
      .describe(
        'Key that signs the upload URLs this service serves itself (local storage), HMAC-SHA256, e.g. `openssl rand -base64 32`; replicas need the same one. Unset: a key generated in DATA_DIR.',
      ),
  };
}

export type LoadJobSettings = z.output<z.ZodObject<ReturnType<typeof loadJobSettings>>>;
