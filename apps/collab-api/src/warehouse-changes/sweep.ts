/**
 * The reconciler's comparison of the warehouse with the records (see repairs.ts for the
 * decision). The warehouse is listed before the records are read: an object is made only after
 * its record is committed, so an object listed has its record in what is read next, unless the
 * record was archived meanwhile. Each repair then claims its record in the outbox (changes of
 * that record and of the records that rely on it wait for it), checks under that claim that it
 * is still needed, and is applied like any change.
 */
import type { Logger } from '@repo/http';
import type { Transaction } from '../database.js';
import type { WarehouseChange } from '../generated/prisma/client.js';
import { fieldsOf } from '../tables/fields.js';
import { applyChange, type ChangeDeps } from './apply.js';
import type { ChangePlan } from './plan.js';
import { changeUnderWay, tryAddChange } from './record.js';
import { busyRecords, plannedRepairs, type Repair } from './repairs.js';

export type SweepDeps = Pick<ChangeDeps, 'db' | 'warehouse' | 'leaseSeconds'> & { logger: Logger };

/** Compares the warehouse with the records and repairs the difference; returns how many repairs were made. */
export async function sweepWarehouse(deps: SweepDeps): Promise<number> {
  const warehouse = await deps.warehouse.listDatasets();
  const [datasets, tables, changes] = await Promise.all([
    deps.db.dataset.findMany({ where: { archivedAt: null }, select: { id: true } }),
    deps.db.table.findMany({ where: { archivedAt: null }, select: { id: true, datasetId: true } }),
    deps.db.warehouseChange.findMany({ select: { recordId: true, involves: true } }),
  ]);
  let made = 0;
  for (const repair of plannedRepairs(warehouse, { datasets, tables }, busyRecords(changes))) {
    const change = await claim(deps, repair);
    if (!change) continue;
    try {
      await applyChange({ ...deps, crashPoint: () => {} }, change);
      deps.logger.info({ repair }, 'repaired the warehouse to match the records');
      made++;
    } catch (error) {
      // Tried again by the next sweep.
      deps.logger.error({ err: error, repair }, 'could not repair the warehouse');
    }
  }
  return made;
}

/**
 * Records the repair as a change, if it is still needed: its record is read under a row lock,
 * and neither it nor its dataset has a change under way. Undefined otherwise.
 */
function claim(deps: SweepDeps, repair: Repair): Promise<WarehouseChange | undefined> {
  return deps.db.$transaction(async (tx) => {
    const intent = await repairIntent(tx, repair);
    if (!intent) return undefined;
    if (await changeUnderWay(tx, { changing: intent.recordId, relyingOn: intent.involves })) return undefined;
    return tryAddChange(tx, { kind: 'repair', ...intent }, deps.leaseSeconds);
  });
}

interface RepairIntent {
  tenantId: string | null;
  recordId: string;
  involves: string[];
  plan: ChangePlan;
}

/** The change a repair makes, from its record as it is now (locked); undefined when the repair is no longer needed. */
async function repairIntent(tx: Transaction, repair: Repair): Promise<RepairIntent | undefined> {
  switch (repair.op) {
    case 'drop_dataset': {
      const { datasetId } = repair;
      if (await lockedLiveDataset(tx, datasetId)) return undefined;
      return { tenantId: null, recordId: datasetId, involves: [], plan: { op: 'delete_dataset', datasetId } };
    }
    case 'drop_table': {
      const { table } = repair;
      const live = await lockedLiveTable(tx, table.tableId);
      if (live?.datasetId === table.datasetId) return undefined;
      const plan: ChangePlan = { op: 'delete_table', table };
      return { tenantId: live?.tenantId ?? null, recordId: table.tableId, involves: [table.datasetId], plan };
    }
    case 'make_dataset': {
      const dataset = await lockedLiveDataset(tx, repair.datasetId);
      if (!dataset) return undefined;
      const metadata = { friendlyName: dataset.name, description: dataset.description };
      return {
        tenantId: dataset.tenantId,
        recordId: dataset.id,
        involves: [],
        plan: { op: 'create_dataset', datasetId: dataset.id, metadata },
      };
    }
    case 'make_table': {
      const live = await lockedLiveTable(tx, repair.table.tableId);
      if (live?.datasetId !== repair.table.datasetId) return undefined;
      const plan: ChangePlan = {
        op: 'create_table',
        table: repair.table,
        fields: fieldsOf(live),
        metadata: { friendlyName: live.name },
      };
      return { tenantId: live.tenantId, recordId: live.id, involves: [live.datasetId], plan };
    }
  }
}

async function lockedLiveDataset(tx: Transaction, id: string) {
  await tx.$queryRaw`SELECT 1 FROM datasets WHERE id = ${id}::uuid AND archived_at IS NULL FOR UPDATE`;
  return tx.dataset.findFirst({ where: { id, archivedAt: null } });
}

async function lockedLiveTable(tx: Transaction, id: string) {
  await tx.$queryRaw`SELECT 1 FROM tables WHERE id = ${id}::uuid AND archived_at IS NULL FOR UPDATE`;
  return tx.table.findFirst({ where: { id, archivedAt: null } });
}
