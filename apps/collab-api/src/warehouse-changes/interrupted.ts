import type { Logger } from '@repo/http';
import { applyChange, type ChangeDeps } from './apply.js';

export type InterruptedChangeDeps = Pick<ChangeDeps, 'db' | 'warehouse' | 'leaseSeconds'> & { logger: Logger };

/** How many interrupted changes one statement claims. */
const BATCH = 50;

/**
 * Finishes the changes still recorded past their lease: their process stopped (a crash, a kill)
 * between recording them and recording the outcome. Each is claimed first (its lease extended,
 * rows locked with SKIP LOCKED), so replicas never finish the same change twice; then it is
 * applied again, which does no harm if the warehouse had applied it, and its outcome recorded
 * as the request would have: applied, or refused and undone in the records. Returns how many
 * were finished.
 */
export async function resolveInterruptedChanges(deps: InterruptedChangeDeps): Promise<number> {
  let resolved = 0;
  for (;;) {
    const claimed = await deps.db.$queryRaw<{ id: string }[]>`
      UPDATE warehouse_changes SET lease_until = now() + make_interval(secs => ${deps.leaseSeconds})
       WHERE id IN (SELECT id FROM warehouse_changes WHERE lease_until < now()
                     ORDER BY lease_until LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    for (const { id } of claimed) {
      const change = await deps.db.warehouseChange.findUnique({ where: { id } });
      if (!change) continue;
      try {
        await applyChange({ ...deps, crashPoint: () => {} }, change);
        deps.logger.info(
          { changeId: id, kind: change.kind, recordId: change.recordId },
          'finished an interrupted warehouse change',
        );
      } catch (error) {
        deps.logger.warn(
          { err: error, changeId: id, kind: change.kind, recordId: change.recordId },
          'an interrupted warehouse change failed: undone in the records if the warehouse refused it, tried again otherwise',
        );
      }
      resolved++;
    }
    if (claimed.length < BATCH) return resolved;
  }
}
