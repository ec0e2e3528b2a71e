import type { Logger } from '@repo/http';
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Deps } from './deps.js';
import { resolveInterruptedChanges, sweepWarehouse } from './warehouse-changes/index.js';

export interface ReconcileReport {
  /** Warehouse changes a crash interrupted, finished (or undone when the warehouse refused them). */
  interrupted: number;
  /** Warehouse objects dropped or made again so that the warehouse holds exactly the live records' objects. */
  repaired: number;
  /** Temporary files of uploads and exports a crash cut short (local storage). */
  partialWrites: number;
}

type ReconcilerDeps = Pick<Deps, 'db' | 'warehouse' | 'storage' | 'logger'> & { leaseSeconds: number };

/**
 * A temporary file of a write that has not grown for this long was left by a process that stopped
 * (local storage writes an export or an uploaded file there, then renames it into place).
 */
const PARTIAL_WRITE_IDLE_MS = 60 * 60_000;

/**
 * Puts right what a crash (or kill) interrupted, safe to run on several replicas at once and
 * again after a crash of its own: warehouse changes recorded but not finished, past their lease,
 * and temporary files of writes to storage that stopped (PARTIAL_WRITE_IDLE_MS); with `sweep`, also
 * any other difference between the warehouse and the records (objects without a live record, live
 * records without their object).
 */
export async function reconcile(deps: ReconcilerDeps, options: { sweep: boolean }): Promise<ReconcileReport> {
  const interrupted = await resolveInterruptedChanges(deps);
  const repaired = options.sweep ? await sweepWarehouse(deps) : 0;
  const partialWrites = await deps.storage.sweepPartialWrites(new Date(Date.now() - PARTIAL_WRITE_IDLE_MS));
  return { interrupted, repaired, partialWrites };
}

/**
 * Runs reconcile now and then every `intervalSeconds` (never two rounds at once), sweeping in the
 * first round and then once `sweepIntervalSeconds` have passed since the last sweep; 0: once. A
 * failed round is logged, and the next one tries again.
 */
export function startReconciler(
  deps: ReconcilerDeps,
  options: { intervalSeconds: number; sweepIntervalSeconds: number },
): Periodic {
  let lastSweep: number | undefined;
  return startPeriodic(
    async () => {
      const sweep =
        lastSweep === undefined ||
        (options.sweepIntervalSeconds > 0 && Date.now() - lastSweep >= options.sweepIntervalSeconds * 1000);
      const report = await reconcile(deps, { sweep });
      if (sweep) lastSweep = Date.now();
      logReport(deps.logger, report);
    },
    {
      intervalSeconds: options.intervalSeconds,
      onError: (error) => deps.logger.error({ err: error }, 'reconciliation failed'),
    },
  );
}

function logReport(logger: Logger, report: ReconcileReport): void {
  if (Object.values(report).some((count) => count > 0))
    logger.info(report, 'reconciled the warehouse and storage with the records');
}
