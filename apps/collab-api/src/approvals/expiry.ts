/**
 * The worker's own hourly expiry run (and one when it starts), so that requests expire on time
 * with no scheduler too; the scheduler's calls of the internal operation (the CronJob) do the
 * same, and either run after the other changes nothing more.
 */
import type { Deps } from '../deps.js';
import { expireApprovals } from './service.js';

export const EXPIRY_INTERVAL_MS = 3_600_000;

export function scheduleExpiry(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  options: { intervalMs: number } = { intervalMs: EXPIRY_INTERVAL_MS },
): { stop(): void } {
  const run = () =>
    expireApprovals(deps).then(
      (count) => {
        if (count > 0) deps.logger.info({ count }, 'approval requests expired');
      },
      (error: unknown) => deps.logger.error({ err: error }, 'approval expiry run failed; the next run tries again'),
    );
  void run();
  const timer = setInterval(() => void run(), options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
