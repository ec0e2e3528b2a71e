import { z } from 'zod';
import { queryInteger } from '@repo/http';
import { datasetParams } from '../datasets/schemas.js';
import { analysisRuleSchema } from '../tables/schemas.js';
import { timestamp } from '../shared/schemas.js';

export const referencedTableSchema = z
  .object({
    dataset_id: z.uuid(),
    table_id: z.uuid(),
    name: z.string().meta({ description: '`dataset_name.table_name`, as the query names it' }),
  })
  .meta({ id: 'ReferencedTable' });

export type ReferencedTable = z.input<typeof referencedTableSchema>;

export const appliedRuleSchema = referencedTableSchema
  .extend({
    tenant_id: z.uuid().meta({ description: "The table's owner" }),
    join_only_columns: z
      .array(z.string())
      .meta({ description: 'Its private columns: equality join keys only, null when selected' }),
    analysis_rule: analysisRuleSchema.nullable(),
    allow_exports: z.boolean().meta({ description: "Its dataset's share policy when the job started" }),
  })
  .meta({ id: 'AppliedRule', description: "The rules of another tenant's table that a query obeys" });

export type AppliedRule = z.input<typeof appliedRuleSchema>;

export const accessLogParams = datasetParams;

export const accessLogQuery = z.strictObject({
  page: queryInteger({ min: 1, default: 1, description: 'Page number, from 1' }),
  page_size: queryInteger({ min: 1, max: 100, default: 20, description: 'Jobs per page' }),
});

const loggedExport = z.object({
  id: z.uuid(),
  status: z.string(),
  format: z.string(),
  compression: z.string(),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
});

export const accessLogEntry = z
  .object({
    job_id: z.uuid(),
    query_id: z.uuid(),
    tenant_id: z.uuid().meta({ description: 'The tenant that ran the job' }),
    tenant_name: z.string(),
    user_email: z.string().nullable().meta({ description: 'Who ran it (null for jobs from before that was recorded)' }),
    query_text: z.string(),
    status: z.string(),
    total_rows: z.number().int().nullable().meta({ description: 'Rows returned' }),
    suppressed_row_count: z.number().int().nullable().meta({ description: 'Groups an aggregation threshold dropped' }),
    total_bytes_processed: z.number().int().nullable(),
    created_at: timestamp,
    applied_rules: z
      .array(appliedRuleSchema)
      .meta({ description: "The rules of this dataset's tables the job applied: those in force when it started" }),
    exports: z.array(loggedExport).meta({ description: 'Exports made of its result' }),
  })
  .meta({ id: 'AccessLogEntry' });

export type AccessLogEntry = z.input<typeof accessLogEntry>;

export const accessLogPage = z
  .object({ items: z.array(accessLogEntry), total: z.number().int(), page: z.number().int(), page_size: z.number().int() })
  .meta({ id: 'AccessLog' });
