import { setting } from '@repo/config';
import type { z } from 'zod';

export const WORKER_MODES = ['off', 'inline', 'only'] as const;

/** The background worker's environment variables, to spread into the app's configuration schema. */
export function workerSettings() {
  return {
    COLLAB_WORKER: setting
      .oneOf(WORKER_MODES)
      .default('inline')
      .describe(
        'Where background jobs (load jobs) run: `inline` in the API process (the default, and the only choice with DuckDB, which one process holds); `off`: this process only queues them; `only`: this process runs jobs and serves only /health, /ready and /metrics. With BigQuery, run API (`off`) and worker (`only`) as separate Deployments.',
      ),
    COLLAB_WORKER_POLL_SECONDS: setting
      .integer({ min: 1, max: 60 })
      .default(2)
      .describe(
        'How often an idle worker looks for queued jobs besides being woken: a job queued in any process wakes the workers at once (Postgres LISTEN/NOTIFY; on the embedded database, only those of its own process). Delayed jobs and retries coming due wait for the next look.',
      ),
    COLLAB_JOB_HEARTBEAT_SECONDS: setting
      .integer({ min: 10, max: 3600 })
      .default(30)
      .describe(
        'A running job reports that it is alive this often; one not heard from for this long (its process stopped or was killed) is retried, or failed once out of retries.',
      ),
  };
}

export type WorkerSettings = z.output<z.ZodObject<ReturnType<typeof workerSettings>>>;
export type WorkerMode = (typeof WORKER_MODES)[number];
