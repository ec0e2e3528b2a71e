import { setting } from '@repo/config';
import type { z } from 'zod';

/** Query jobs' environment variables, to spread into the app's configuration schema. */
export function queryJobSettings() {
  return {
    COLLAB_QUERY_TIMEOUT_SECONDS: setting
      .integer({ min: 1, max: 6 * 3600 })
      .default(600)
      .describe('How long a query job may run on the warehouse before it is stopped and fails (`timeout`).'),
  };
}

export type QueryJobSettings = z.output<z.ZodObject<ReturnType<typeof queryJobSettings>>>;
