/**
 * The one scheduled approval expiry: a sweep of the worker, run when it starts and every hour
 * after (startPeriodic: a round never overlaps the previous one, and stopping waits for the round
 * under way). Operators may also run it by hand through the internal operation
 * (POST /api/v1/approval/expire?internal_token=); a run after another changes nothing more.
 */
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Deps } from '../deps.js';
import { expireApprovals } from './service.js';

export const EXPIRY_INTERVAL_SECONDS = 3_600;

export function startApprovalExpiry(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  options: { intervalSeconds: number } = { intervalSeconds: EXPIRY_INTERVAL_SECONDS },
): Periodic {
  return startPeriodic(
    async () => {
      const count = await expireApprovals(deps);
      if (count > 0) deps.logger.info({ count }, 'approval requests expired');
    },
    {
      intervalSeconds: options.intervalSeconds,
      onError: (error) => deps.logger.error({ err: error }, 'approval expiry failed; the next round tries again'),
    },
  );
}
