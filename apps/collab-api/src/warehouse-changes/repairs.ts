/**
 * The reconciliation decision: what the warehouse needs so that it holds exactly the objects of
 * the live records. Pure.
 */
import type { TableRef, WarehouseDataset } from '../adapters/warehouse/index.js';

export type Repair =
  /** A dataset (with its tables) that no live record has. */
  | { op: 'drop_dataset'; datasetId: string }
  /** A table that no live record of its dataset has. */
  | { op: 'drop_table'; table: TableRef }
  /** A live dataset whose warehouse dataset is missing. */
  | { op: 'make_dataset'; datasetId: string }
  /** A live table whose warehouse table is missing. */
  | { op: 'make_table'; table: TableRef };

export interface LiveRecords {
  datasets: { id: string }[];
  tables: { id: string; datasetId: string }[];
}

/**
 * The repairs that make `warehouse` hold the objects of the live records, datasets before their
 * tables. Records in `busy` (a change under way concerns them) are left to that change.
 */
export function plannedRepairs(warehouse: WarehouseDataset[], records: LiveRecords, busy: ReadonlySet<string>): Repair[] {
  const liveDatasets = new Set(records.datasets.map((dataset) => dataset.id));
  const datasetOfTable = new Map(records.tables.map((table) => [table.id, table.datasetId]));
  const present = new Map(warehouse.map((dataset) => [dataset.datasetId, new Set(dataset.tableIds)]));
  const repairs: Repair[] = [];
  for (const { datasetId, tableIds } of warehouse) {
    if (busy.has(datasetId)) continue;
    if (!liveDatasets.has(datasetId)) {
      // Its tables go with it.
      repairs.push({ op: 'drop_dataset', datasetId });
      continue;
    }
    for (const tableId of tableIds) {
      if (!busy.has(tableId) && datasetOfTable.get(tableId) !== datasetId)
        repairs.push({ op: 'drop_table', table: { datasetId, tableId } });
    }
  }
  for (const datasetId of liveDatasets) {
    if (!busy.has(datasetId) && !present.has(datasetId)) repairs.push({ op: 'make_dataset', datasetId });
  }
  for (const [tableId, datasetId] of datasetOfTable) {
    if (busy.has(tableId) || busy.has(datasetId) || !liveDatasets.has(datasetId)) continue;
    if (!present.get(datasetId)?.has(tableId)) repairs.push({ op: 'make_table', table: { datasetId, tableId } });
  }
  return repairs;
}

/** The records a change under way concerns: its own, and the parents it relies on. */
export function busyRecords(changes: { recordId: string; involves: string[] }[]): Set<string> {
  return new Set(changes.flatMap((change) => [change.recordId, ...change.involves]));
}
