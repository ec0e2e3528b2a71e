import { preparedQuery } from '@repo/db';
import { catalogKey, type ReadableCatalog } from '../adapters/warehouse/query/index.js';
import type { Field } from '../adapters/warehouse/index.js';
import { isDatasetOfProjectSql } from '../associations/access.js';
import type { Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { aggregationRule, type AnalysisRule } from '../tables/analysis-rule.js';

/** A live table of a readable dataset, as readableTablesSql lists it. */
export interface ReadableTableRow {
  dataset_id: string;
  tenant_id: string;
  dataset_name: string;
  allow_exports: boolean;
  table_id: string;
  table_name: string;
  schema: Field[];
  analysis_rule: AnalysisRule | null;
}

/**
 * The live tables of the datasets a job of project `projectId` (an SQL expression) may read, as one
 * JSON array of ReadableTableRow, oldest dataset and table first: a select-list item, so that a job's
 * start reads them in its own statement (job.ts).
 */
export function readableTablesSql(projectId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(
      SELECT coalesce(json_agg(json_build_object(
               'dataset_id', d.id, 'tenant_id', d.tenant_id, 'dataset_name', d.name, 'allow_exports', d.allow_exports,
               'table_id', t.id, 'table_name', t.name, 'schema', t.schema, 'analysis_rule', t.analysis_rule)
             ORDER BY d.created_at, d.id, t.created_at, t.id), '[]'::json)
        FROM datasets d JOIN tables t ON t.dataset_id = d.id AND t.archived_at IS NULL
       WHERE ${isDatasetOfProjectSql(Prisma.raw('d'), projectId)})`;
}

/**
 * The tables a job of `projectId` run by `tenantId` may read, by `dataset_name.table_name`: the
 * project's datasets and those shared into it (src/associations). One prepared statement.
 */
export async function readableCatalog(db: Database, options: { projectId: string; tenantId: string }): Promise<ReadableCatalog> {
  const [row] = await preparedQuery<{ tables: ReadableTableRow[] }>(
    db.pool,
    Prisma.sql`SELECT ${readableTablesSql(Prisma.sql`${options.projectId}::uuid`)} AS tables`,
  );
  return catalogOfTables(row!.tables, options.tenantId);
}

/**
 * The catalog of the readable tables `rows` for a job run by `tenantId`. Another tenant's tables
 * carry their owner's rules (src/adapters/warehouse/query/rules.ts): their private columns are
 * masked and join-only, their aggregation rule applies. A name two readable datasets share is
 * ambiguous (null). Pure.
 */
export function catalogOfTables(rows: ReadableTableRow[], tenantId: string): ReadableCatalog {
  const catalog: ReadableCatalog = new Map();
  for (const row of rows) {
    const shared = row.tenant_id !== tenantId;
    const key = catalogKey(row.dataset_name, row.table_name);
    catalog.set(
      key,
      catalog.has(key)
        ? null
        : {
            ref: { datasetId: row.dataset_id, tableId: row.table_id },
            name: `${row.dataset_name}.${row.table_name}`,
            columns: row.schema.map((field) => ({
              name: field.name,
              type: field.type,
              repeated: field.mode === 'REPEATED',
              masked: field.private && shared,
            })),
            ...(shared && {
              shared: {
                tenantId: row.tenant_id,
                aggregation: aggregationRule(row.analysis_rule),
                allowExports: row.allow_exports,
              },
            }),
          },
    );
  }
  return catalog;
}
