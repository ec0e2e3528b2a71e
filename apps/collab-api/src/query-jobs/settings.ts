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
    COLLAB_RESULT_TTL_DAYS: setting
      .integer({ min: 0, max: 3650 })
      .default(7)
      .describe(
        "How long a DONE query job's stored result is kept, in days from when the job ended: then its pages, new exports and download links answer 410, and the expiry sweep deletes the stored rows and the exports' files. 0: a result expires as soon as its job ends (tests).",
      ),
    COLLAB_RESULT_SWEEP_INTERVAL_SECONDS: setting
      .integer({ min: 0, max: 86_400 })
      .default(3600)
      .describe(
        "How often the worker deletes expired results (the warehouse's stored rows and the exports' files; it also does at its start); 0: at start only. A result is deleted at the first sweep ten seconds or more after it expired.",
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
