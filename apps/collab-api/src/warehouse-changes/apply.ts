/**
 * Applying a recorded change to the warehouse, outside any transaction, then recording its
 * outcome: the change's row is deleted, and the records get what the outcome means for them, in
 * one transaction. Requests do this before they answer; the reconciler does it for the changes a
 * crash interrupted.
 */
import type { CrashPoint } from '@repo/config';
import { ConflictError } from '@repo/errors';
import type { Warehouse } from '../adapters/warehouse/index.js';
import type { Database, Transaction } from '../database.js';
import { archiveDatasetWithTables } from '../datasets/archive.js';
import { datasetData, type DatasetFields } from '../datasets/plan.js';
import type { WarehouseChange } from '../generated/prisma/client.js';
import { archiveTables } from '../tables/archive.js';
import { tableData, type TableFields } from '../tables/plan.js';
import type { ChangePlan } from './plan.js';

export interface ChangeDeps {
  db: Database;
  warehouse: Warehouse;
  /** Where crash tests stop the process (TEST_CRASH_POINT): `<kind>:recorded` and `<kind>:applied`. */
  crashPoint: CrashPoint;
  /** How long a change may stay under way before the reconciler takes it for interrupted. */
  leaseSeconds: number;
}

type Outcome = 'applied' | 'refused';

/**
 * Applies `change` to the warehouse and records the outcome. When the warehouse refuses it (or
 * fails), the change is undone in the records (see updateRecords) and the warehouse's error is
 * thrown: the caller answers with it (502, or 409 for a schema change the table's rows cannot take).
 */
export async function applyChange(
  deps: Pick<ChangeDeps, 'db' | 'warehouse' | 'crashPoint'>,
  change: WarehouseChange,
  // A load does its own work in the warehouse (which the plan describes for a reconciler).
  apply: () => Promise<void> = () => applyPlan(deps.warehouse, change.plan as unknown as ChangePlan),
): Promise<void> {
  deps.crashPoint(`${change.kind}:recorded`);
  try {
    await apply();
  } catch (error) {
    await recordOutcome(deps.db, change, 'refused');
    throw error;
  }
  deps.crashPoint(`${change.kind}:applied`);
  await recordOutcome(deps.db, change, 'applied');
}

function applyPlan(warehouse: Warehouse, plan: ChangePlan): Promise<void> {
  switch (plan.op) {
    case 'create_dataset':
      return warehouse.createDataset(plan.datasetId, plan.metadata);
    case 'update_dataset':
      return warehouse.updateDataset(plan.datasetId, plan.metadata);
    case 'delete_dataset':
      return warehouse.deleteDataset(plan.datasetId);
    case 'create_table':
      return warehouse.createTable(plan.table, plan.fields, plan.metadata);
    case 'update_table':
      return warehouse.updateTable(plan.table, plan.update);
    case 'move_table':
      return moveEmptyTable(warehouse, plan);
    case 'delete_table':
      return warehouse.deleteTable(plan.table);
  }
}

/**
 * The new table first, then the old one dropped. Only an empty table moves: the warehouse
 * interface copies no rows, and copying a large table does not belong in a request. A source
 * already gone was dropped by an earlier attempt, which had found it empty. The target is made
 * anew, not kept if there: a table left there by an earlier move that was undone has the
 * columns of then.
 */
async function moveEmptyTable(warehouse: Warehouse, plan: Extract<ChangePlan, { op: 'move_table' }>): Promise<void> {
  if (((await warehouse.tableRowCount(plan.from)) ?? 0) > 0) {
    throw new ConflictError(
      'The table has rows, so it cannot move to another dataset: create a table there and load the rows into it',
    );
  }
  await warehouse.deleteTable(plan.to);
  await warehouse.createTable(plan.to, plan.fields, plan.metadata);
  await warehouse.deleteTable(plan.from);
}

/**
 * Ends the change: deletes its row and gives the records the outcome, in one transaction; does
 * nothing when another process ended the change already (a reconciler that took it for
 * interrupted).
 */
async function recordOutcome(db: Database, change: WarehouseChange, outcome: Outcome): Promise<void> {
  await db.$transaction(async (tx) => {
    const { count } = await tx.warehouseChange.deleteMany({ where: { id: change.id } });
    if (count > 0) await updateRecords(tx, change, outcome);
  });
}

/**
 * What an outcome means for the records. Creates and updates are written when they are recorded,
 * so only a refusal changes them: a refused create archives its record (which frees its name),
 * a refused update restores the fields it had. A delete keeps its record live until the
 * warehouse has dropped the object, so only then is it archived. Repairs concern the warehouse only.
 */
async function updateRecords(tx: Transaction, change: WarehouseChange, outcome: Outcome): Promise<void> {
  const tenant = { tenantId: change.tenantId! };
  const id = change.recordId;
  switch (change.kind) {
    case 'create_dataset':
      if (outcome === 'refused') await archiveDatasetWithTables(tx, tenant, id);
      return;
    case 'delete_dataset':
      if (outcome === 'applied') await archiveDatasetWithTables(tx, tenant, id);
      return;
    case 'create_table':
      if (outcome === 'refused') await archiveTables(tx, tenant, { id });
      return;
    case 'delete_table':
      if (outcome === 'applied') await archiveTables(tx, tenant, { id });
      return;
    case 'update_dataset':
      if (outcome === 'refused') {
        await tx.dataset.update({ where: { id }, data: datasetData(change.previous as unknown as DatasetFields) });
      }
      return;
    case 'update_table':
      if (outcome === 'refused') {
        await tx.table.update({ where: { id }, data: tableData(change.previous as unknown as TableFields) });
      }
      return;
    case 'repair':
      return;
  }
}
