/**
 * Expired results go: a DONE job's stored result is kept until `results_expire_at`
 * (COLLAB_RESULT_TTL_DAYS after the job ended). From then on its pages, new exports and download
 * links answer 410 (decided by the time, whatever the sweep did); this sweep of the worker, run
 * when it starts and every COLLAB_RESULT_SWEEP_INTERVAL_SECONDS (startPeriodic: never two rounds
 * at once), deletes the stored rows and the exports' files.
 *
 * Crash-safe: a job's files and stored result are deleted first, and only then is the job marked
 * (`results_deleted_at`). Killed between the two, the next round deletes again what is already
 * gone (a missing object or table is deleted) and marks it: nothing is left behind, and nothing
 * answers 500 meanwhile, as requests go by the expiry time alone. A result is taken ten seconds
 * after it expired, so that a request that checked the time just before (or a process whose clock
 * is a little behind) can still read it, and not while an export of it waits or runs (the export
 * fails by itself once it sees the expiry).
 */
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Deps } from '../deps.js';
import { exportFolder } from '../exports/service.js';

/** How long after its expiry a result is deleted: longer than a page's read takes, and than clocks differ between processes. */
export const DELETE_AFTER_EXPIRY_MS = 10_000;

/** Jobs taken per query of a round. */
const BATCH = 100;

type ExpiryDeps = Pick<Deps, 'db' | 'queryEngine' | 'storage' | 'crashPoint' | 'now' | 'logger'>;

/** Deletes the stored results (and exports' files) of every job expired ten seconds or more ago; answers how many. */
export async function deleteExpiredResults(deps: ExpiryDeps): Promise<number> {
  let deleted = 0;
  for (;;) {
    const cutoff = new Date(deps.now().getTime() - DELETE_AFTER_EXPIRY_MS);
    const jobs = await deps.db.queryJob.findMany({
      where: {
        resultsExpireAt: { lt: cutoff },
        resultsDeletedAt: null,
        exports: { none: { status: { in: ['PENDING', 'RUNNING'] } } },
      },
      select: { id: true, exports: { select: { id: true, tenantId: true } } },
      orderBy: [{ resultsExpireAt: 'asc' }, { id: 'asc' }],
      take: BATCH,
    });
    for (const job of jobs) {
      for (const exportRow of job.exports) await deps.storage.deletePrefix(exportFolder(exportRow));
      await deps.queryEngine.dropResult(job.id);
      // Killed here, the next round deletes the same (already gone) and marks the job.
      deps.crashPoint('result_expiry:deleted');
      await deps.db.$transaction([
        deps.db.queryJob.updateMany({ where: { id: job.id, resultsDeletedAt: null }, data: { resultsDeletedAt: new Date() } }),
        deps.db.queryExport.updateMany({
          where: { queryJobId: job.id },
          data: { storageKey: null, signedUrl: null, signedExpiresAt: null },
        }),
      ]);
      deleted += 1;
    }
    if (jobs.length < BATCH) return deleted;
  }
}

export function startResultExpiry(deps: ExpiryDeps, options: { intervalSeconds: number }): Periodic {
  return startPeriodic(
    async () => {
      const count = await deleteExpiredResults(deps);
      if (count > 0) deps.logger.info({ count }, 'expired query results deleted');
    },
    {
      intervalSeconds: options.intervalSeconds,
      onError: (error) => deps.logger.error({ err: error }, 'deleting expired query results failed; the next round tries again'),
    },
  );
}
