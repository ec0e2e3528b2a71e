/**
 * The background worker: runs the jobs of the catalog (src/jobs/catalog.ts) in this process, and
 * expires approval requests hourly (approvals/expiry.ts). server.ts starts it beside the API
 * (COLLAB_WORKER=inline) or alone (only).
 */
import { type Express, Router } from 'express';
import { collabErrorFormat } from '@repo/errors';
import { createServiceApp } from '@repo/http';
import { startApprovalExpiry } from './approvals/expiry.js';
import type { Deps } from './deps.js';

export interface Worker {
  /** Lets running jobs finish within `graceSeconds`; those still running then are released to be retried. */
  stop(graceSeconds: number): Promise<void>;
}

export async function startWorker(deps: Deps): Promise<Worker> {
  await deps.queue.work(deps);
  const expiry = startApprovalExpiry(deps);
  deps.logger.info({ mode: deps.config.COLLAB_WORKER }, 'background worker started');
  return {
    async stop(graceSeconds) {
      // An expiry round under way finishes (it is one short UPDATE) while the jobs get their grace.
      await Promise.all([expiry.stop(), deps.queue.stop(graceSeconds)]);
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
