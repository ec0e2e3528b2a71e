/**
 * The background worker: runs the jobs of the catalog (src/jobs/catalog.ts) in this process,
 * expires approval requests hourly (approvals/expiry.ts) and deletes expired query results
 * (query-jobs/expiry.ts). server.ts starts it beside the API
 * (COLLAB_WORKER=inline) or alone (only).
 */
import { type Express, Router } from 'express';
import { collabErrorFormat } from '@repo/errors';
import { createServiceApp } from '@repo/http';
import { startApprovalExpiry } from './approvals/expiry.js';
import type { Deps } from './deps.js';
import { startResultExpiry } from './query-jobs/expiry.js';

export interface Worker {
  /** Lets running jobs finish within `graceSeconds`; those still running then are released to be retried. */
  stop(graceSeconds: number): Promise<void>;
}

export async function startWorker(deps: Deps): Promise<Worker> {
  await deps.queue.work(deps);
  const expiry = startApprovalExpiry(deps);
  const results = startResultExpiry(deps, { intervalSeconds: deps.config.COLLAB_RESULT_SWEEP_INTERVAL_SECONDS });
  deps.logger.info({ mode: deps.config.COLLAB_WORKER }, 'background worker started');
  return {
    async stop(graceSeconds) {
      // Expiry rounds under way finish (short UPDATEs, and deletes a crash would leave for the next round) while the jobs get their grace.
      await Promise.all([expiry.stop(), results.stop(), deps.queue.stop(graceSeconds)]);
    },
  };
}

/** What a worker-only process (COLLAB_WORKER=only) serves: /health, /ready and /metrics, for its probes. */
export function buildWorkerApp(deps: Deps): Express {
  return createServiceApp({
    service: 'collab-api-worker',
    version: '1',
    logger: deps.logger,
    metrics: deps.metrics,
    errorFormat: collabErrorFormat,
    checkReadiness: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
    routes: Router(),
  });
}
