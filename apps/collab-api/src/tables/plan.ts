import { ConflictError, ValidationError } from '@repo/errors';
import type { Field, TableRef, TableUpdate } from '../adapters/warehouse/index.js';
import type { Table } from '../generated/prisma/client.js';
import { changedNames, type PlannedUpdate } from '../warehouse-changes/plan.js';
import { type AnalysisRule, canonicalRule, ruleOf, ruleProblem, storedRule } from './analysis-rule.js';
import { fieldsOf, sameFields, storedFields } from './fields.js';
import type { UpdateTableInput } from './schemas.js';

/** The fields of a table that an update changes. */
export interface TableFields {
  name: string;
  datasetId: string;
  schema: Field[];
  /** Absent in changes recorded before tables had rules. */
  analysisRule?: AnalysisRule | null;
}

/** The columns a table's fields are stored in: `live_name` follows the name of a live table. */
export function tableData(fields: TableFields) {
  return {
    ...fields,
    liveName: fields.name.toLowerCase(),
    schema: storedFields(fields.schema),
    analysisRule: storedRule(fields.analysisRule),
  };
}

/**
 * The rule the table has after an update: the one given (null removes it), else its own, which
 * must still fit new columns (409 otherwise: change or remove the rule first). An update that
 * changes neither keeps the rule as it is (a rename is no reason to refuse).
 */
function ruleAfter(table: Table, input: UpdateTableInput, fields: Field[]): AnalysisRule | null {
  const given = input.analysis_rule;
  const rule = given === undefined ? ruleOf(table) : given;
  if (!rule) return null;
  if (given === undefined && input.schema === undefined) return rule;
  const problem = ruleProblem(rule, fields);
  if (problem && given) {
    throw new ValidationError([{ loc: ['body', 'analysis_rule', 'privacy_unit'], msg: problem, type: 'value_error' }]);
  }
  if (problem)
    throw new ConflictError(
      `The table's analysis rule no longer fits these columns: ${problem}; change or remove the rule first`,
    );
  return canonicalRule(rule, fields);
}

export function tableRef(table: Pick<Table, 'id' | 'datasetId'>): TableRef {
  return { datasetId: table.datasetId, tableId: table.id };
}

/**
 * A PATCH of a table, planned from its locked row: its name (the warehouse's friendly name), its
 * columns (the warehouse plans the change against the table's rows, and refuses an incompatible
 * one with 409), its dataset (a new table there, since physical names come from ids), or its
 * analysis rule (the records only).
 */
export function planTableUpdate(table: Table, input: UpdateTableInput): PlannedUpdate<TableFields> {
  const before: TableFields = {
    name: table.name,
    datasetId: table.datasetId,
    schema: fieldsOf(table),
    analysisRule: ruleOf(table),
  };
  const schema = input.schema ?? before.schema;
  const after: TableFields = {
    name: input.name ?? before.name,
    datasetId: input.dataset_id ?? before.datasetId,
    schema,
    analysisRule: ruleAfter(table, input, schema),
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
