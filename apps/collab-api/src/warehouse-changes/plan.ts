/**
 * What a warehouse change does, as the outbox stores it (warehouse_changes.plan). Pure types and
 * rules: no database, no warehouse.
 */
import type { Field, TableRef, TableUpdate, WarehouseMetadata } from '../adapters/warehouse/index.js';

/**
 * What the warehouse is to do for one change. Each one may be done again after an interruption
 * with the same result (the adapters take what is already made, or already gone, as done).
 */
export type ChangePlan =
  | { op: 'create_dataset'; datasetId: string; metadata: WarehouseMetadata }
  | { op: 'update_dataset'; datasetId: string; metadata: WarehouseMetadata }
  | { op: 'delete_dataset'; datasetId: string }
  | { op: 'create_table'; table: TableRef; fields: Field[]; metadata: WarehouseMetadata }
  | { op: 'update_table'; table: TableRef; update: TableUpdate }
  /** Only an empty table moves (409 otherwise): a table's physical name comes from its dataset's id. */
  | { op: 'move_table'; from: TableRef; to: TableRef; fields: Field[]; metadata: WarehouseMetadata }
  | { op: 'delete_table'; table: TableRef };

/** An update of a record, planned from its locked row. */
export interface PlannedUpdate<Fields> {
  /** The record's fields after the update. */
  after: Fields;
  /** The same fields before it: what the record gets back if the warehouse refuses the change. */
  before: Fields;
  /** What the warehouse must do; undefined when it keeps nothing that changed. */
  plan?: ChangePlan;
  /** When the update renames or moves the record: the name it frees and the one it takes (nameKey). */
  names?: { freed: string; taken: string };
}

/**
 * A live name within its parent (a dataset's within its project, a table's within its dataset),
 * as the outbox holds a name that a change under way freed.
 */
export function nameKey(parentId: string, name: string): string {
  return `${parentId}/${name.toLowerCase()}`;
}

/** The names an update frees and takes, when it renames the record (not just its case) or moves it. */
export function changedNames(
  before: { parentId: string; name: string },
  after: { parentId: string; name: string },
): PlannedUpdate<unknown>['names'] {
  const [freed, taken] = [nameKey(before.parentId, before.name), nameKey(after.parentId, after.name)];
  return freed === taken ? undefined : { freed, taken };
}
