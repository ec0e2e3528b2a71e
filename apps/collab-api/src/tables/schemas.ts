import { z } from 'zod';
import { FIELD_MODES, FIELD_TYPES, tableSchemaInput } from '../adapters/warehouse/index.js';
import { archivedAt, displayName, idParams, timestamp } from '../shared/schemas.js';

const fieldSchema = z
  .object({
    name: z.string(),
    type: z.enum(FIELD_TYPES),
    mode: z.enum(FIELD_MODES),
    description: z.string().optional(),
    private: z.boolean().meta({ description: 'Masked in query results seen by other tenants' }),
  })
  .meta({ id: 'TableField' });

const analysisRuleFields = {
  type: z.literal('aggregation').meta({ description: 'The only kind: an aggregation threshold' }),
  privacy_unit: z.string().meta({
    description: 'A public column whose distinct values are counted in every group (a customer id, say)',
  }),
  min_distinct: z.number().int().meta({ description: 'Groups with fewer distinct privacy units are dropped' }),
};

export const analysisRuleSchema = z.object(analysisRuleFields).meta({
  id: 'AnalysisRule',
  description:
    "The owner's rule for other tenants' queries: they must aggregate (every result row a group), and groups with fewer than min_distinct distinct privacy units are dropped",
});

export const tableSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    dataset_id: z.uuid(),
    name: z.string(),
    schema: z
      .array(fieldSchema)
      .meta({ description: 'The columns, normalised: canonical types, explicit mode and private flag' }),
    analysis_rule: analysisRuleSchema.nullable(),
    created_at: timestamp,
    archived_at: archivedAt,
  })
  .meta({ id: 'Table' });

export type TableResponse = z.input<typeof tableSchema>;

export const tableList = z.object({ tables: z.array(tableSchema) }).meta({ id: 'TableList' });

export const tableParams = idParams('table_id');

const name = displayName().meta({ description: 'Unique among the live tables of the dataset, without regard to case' });

const columns = tableSchemaInput.meta({
  description:
    'The columns: a BigQuery-style list `[{ "name", "type", "mode"?, "description"?, "private"? }]`, or `{ "fields": [...] }`. ' +
    `Types: ${FIELD_TYPES.join(', ')} (and INTEGER, FLOAT, BOOLEAN); modes: ${FIELD_MODES.join(', ')} (default NULLABLE).`,
  example: [
    { name: 'id', type: 'INT64', mode: 'REQUIRED' },
    { name: 'email', type: 'STRING', private: true },
  ],
});

export const createTableBody = z.strictObject({ name, schema: columns, dataset_id: z.uuid() });

export type CreateTableInput = z.output<typeof createTableBody>;

export const updateTableBody = z.strictObject({
  name: name.nullish().meta({ description: 'Absent or null keeps the current name' }),
  schema: columns.nullish().meta({
    description:
      'The whole new column list; absent or null keeps the current one. A table with rows takes only new NULLABLE or REPEATED ' +
      'columns after the existing ones, REQUIRED relaxed to NULLABLE, and new descriptions or private flags (409 otherwise).',
  }),
  dataset_id: z.uuid().nullish().meta({
    description: "Moves the table to another dataset of the caller's tenant; only an empty table can move (409 otherwise)",
  }),
  analysis_rule: z
    .strictObject({
      ...analysisRuleFields,
      privacy_unit: z.string().min(1).max(300).meta(analysisRuleFields.privacy_unit.meta()!),
      min_distinct: z.number().int().min(2).max(1_000_000).meta(analysisRuleFields.min_distinct.meta()!),
    })
    .nullable()
    .optional()
    .meta({
      description:
        "The analysis rule other tenants' queries over the table obey; absent keeps it, null removes it. privacy_unit must be a public, not REPEATED, column (422 otherwise)",
    }),
});

export type UpdateTableInput = z.output<typeof updateTableBody>;
