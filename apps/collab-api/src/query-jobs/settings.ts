import { setting } from '@repo/config';
import type { z } from 'zod';

/** Query jobs' environment variables, to spread into the app's configuration schema. */
export function queryJobSettings() {
  return {
    COLLAB_QUERY_TIMEOUT_SECONDS: setting
      .integer({ min: 1, max: 6 * 3600 })
      .default(600)
      .describe(
        'How long a query job may run on the warehouse before it is stopped and fails (`timeout`); it is charged what it processed, as BigQuery charges a cancelled job.',
      ),
    COLLAB_QUERY_MAX_RESULT_ROWS: setting
      .integer({ min: 1, max: 10_000_000_000 })
      .default(100_000_000)
      .describe(
        'Most rows a query job stores as its result (DuckDB): a query with more fails (`resourcesExceeded`) once it has produced one row more, and stores nothing.',
      ),
    COLLAB_QUERY_CONCURRENCY: setting
      .integer({ min: 1, max: 64 })
      .default(2)
      .describe('How many query jobs a worker process runs at once (DuckDB runs them side by side on its threads).'),
    COLLAB_QUERY_CONCURRENCY_PER_TENANT: setting
      .integer({ min: 1, max: 64 })
      .default(1)
      .describe(
        "How many of one tenant's query jobs a worker process runs at once; below COLLAB_QUERY_CONCURRENCY, the other places stay free for other tenants. Waiting jobs start in round-robin order between tenants.",
      ),
  };
}

export type QueryJobSettings = z.output<z.ZodObject<ReturnType<typeof queryJobSettings>>>;
