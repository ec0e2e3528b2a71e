import { ConflictError } from '@repo/errors';
import type { TableRef, TableUpdate, Warehouse } from '../adapters/warehouse/index.js';
import type { Table } from '../generated/prisma/client.js';
import { fieldsOf, sameFields } from './fields.js';

export function tableRef(table: Pick<Table, 'id' | 'datasetId'>): TableRef {
  return { datasetId: table.datasetId, tableId: table.id };
}

/**
 * Applies a table's update to the warehouse: its name, its columns (the warehouse plans the
 * change against the table's rows and refuses an incompatible one with 409), or its dataset.
 */
export async function mirrorTableUpdate(warehouse: Warehouse, before: Table, after: Table): Promise<void> {
  if (after.datasetId !== before.datasetId) {
    await moveEmptyTable(warehouse, before, after);
    return;
  }
  const update: TableUpdate = {};
  if (after.name !== before.name) update.friendlyName = after.name;
  if (!sameFields(fieldsOf(before), fieldsOf(after))) update.schema = { from: fieldsOf(before), to: fieldsOf(after) };
  if (Object.keys(update).length > 0) await warehouse.updateTable(tableRef(before), update);
}

/**
 * A table's warehouse name comes from its dataset's id, so moving it means a new table in the
 * other dataset. Only an empty table moves: the warehouse interface copies no rows, and copying a
 * large table does not belong in a request.
 */
async function moveEmptyTable(warehouse: Warehouse, before: Table, after: Table): Promise<void> {
  const from = tableRef(before);
  if ((await warehouse.tableRowCount(from)) > 0) {
    throw new ConflictError(
      'The table has rows, so it cannot move to another dataset: create a table there and load the rows into it',
    );
  }
  const to = tableRef(after);
  await warehouse.createTable(to, fieldsOf(after), { friendlyName: after.name });
  try {
    await warehouse.deleteTable(from);
  } catch (error) {
    // Undo the copy so the warehouse matches the records, which roll back; the delete's error is the one to report.
    await warehouse.deleteTable(to).catch(() => undefined);
    throw error;
  }
}
