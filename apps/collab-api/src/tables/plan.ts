import type { Field, TableRef, TableUpdate } from '../adapters/warehouse/index.js';
import type { Table } from '../generated/prisma/client.js';
import { changedNames, type PlannedUpdate } from '../warehouse-changes/plan.js';
import { fieldsOf, sameFields, storedFields } from './fields.js';
import type { UpdateTableInput } from './schemas.js';

/** The fields of a table that an update changes. */
export interface TableFields {
  name: string;
  datasetId: string;
  schema: Field[];
}

/** The columns a table's fields are stored in: `live_name` follows the name of a live table. */
export function tableData(fields: TableFields) {
  return { ...fields, liveName: fields.name.toLowerCase(), schema: storedFields(fields.schema) };
}

export function tableRef(table: Pick<Table, 'id' | 'datasetId'>): TableRef {
  return { datasetId: table.datasetId, tableId: table.id };
}

/**
 * A PATCH of a table, planned from its locked row: its name (the warehouse's friendly name), its
 * columns (the warehouse plans the change against the table's rows, and refuses an incompatible
 * one with 409), or its dataset (a new table there, since physical names come from ids).
 */
export function planTableUpdate(table: Table, input: UpdateTableInput): PlannedUpdate<TableFields> {
  const before: TableFields = { name: table.name, datasetId: table.datasetId, schema: fieldsOf(table) };
  const after: TableFields = {
    name: input.name ?? before.name,
    datasetId: input.dataset_id ?? before.datasetId,
    schema: input.schema ?? before.schema,
  };
  const names = changedNames({ parentId: before.datasetId, name: before.name }, { parentId: after.datasetId, name: after.name });
  if (after.datasetId !== before.datasetId) {
    return {
      before,
      after,
      names,
      plan: {
        op: 'move_table',
        from: tableRef(table),
        to: { datasetId: after.datasetId, tableId: table.id },
        fields: after.schema,
        metadata: { friendlyName: after.name },
      },
    };
  }
  const update: TableUpdate = {};
  if (after.name !== before.name) update.friendlyName = after.name;
  if (!sameFields(before.schema, after.schema)) update.schema = { from: before.schema, to: after.schema };
  return {
    before,
    after,
    names,
    plan: Object.keys(update).length > 0 ? { op: 'update_table', table: tableRef(table), update } : undefined,
  };
}
