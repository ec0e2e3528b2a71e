import { setting } from '@repo/config';
import type { z } from 'zod';

/** Query exports' environment variables, to spread into the app's configuration schema. */
export function exportSettings() {
  return {
    COLLAB_EXPORT_URL_TTL_SECONDS: setting
      .integer({ min: 60, max: 604_800 })
      .default(3600)
      .describe(
        'How long an export’s download URL works, in seconds (at most 7 days, the limit of Cloud Storage signed URLs); a new one is signed when the last has expired. Local storage’s links are signed with COLLAB_UPLOAD_URL_SECRET.',
      ),
  };
}

export type ExportSettings = z.output<z.ZodObject<ReturnType<typeof exportSettings>>>;
