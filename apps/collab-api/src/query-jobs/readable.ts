import { preparedQuery } from '@repo/db';
import { catalogKey, type ReadableCatalog } from '../adapters/warehouse/query/index.js';
import type { Field } from '../adapters/warehouse/index.js';
import { isDatasetOfProjectSql } from '../associations/access.js';
import type { Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { aggregationRule, type AnalysisRule } from '../tables/analysis-rule.js';

/**
 * The tables a job of `projectId` run by `tenantId` may read, by `dataset_name.table_name`: the
 * project's datasets and those shared into it (src/associations). Another tenant's tables carry
 * their owner's rules (src/adapters/warehouse/query/rules.ts): their private columns are masked
 * and join-only, their aggregation rule applies. A name two readable datasets share is ambiguous (null).
 */
export async function readableCatalog(db: Database, options: { projectId: string; tenantId: string }): Promise<ReadableCatalog> {
  // One prepared statement (every job reads it before it runs): the live tables of the readable datasets.
  const rows = await preparedQuery<{
    dataset_id: string;
    tenant_id: string;
    dataset_name: string;
    allow_exports: boolean;
    table_id: string;
    table_name: string;
    schema: Field[];
    analysis_rule: AnalysisRule | null;
  }>(
    db.pool,
    Prisma.sql`
      SELECT d.id AS dataset_id, d.tenant_id, d.name AS dataset_name, d.allow_exports,
             t.id AS table_id, t.name AS table_name, t.schema, t.analysis_rule
        FROM datasets d JOIN tables t ON t.dataset_id = d.id AND t.archived_at IS NULL
       WHERE ${isDatasetOfProjectSql(Prisma.raw('d'), Prisma.sql`${options.projectId}::uuid`)}
       ORDER BY d.created_at, d.id, t.created_at, t.id`,
  );
  const catalog: ReadableCatalog = new Map();
  for (const row of rows) {
    const shared = row.tenant_id !== options.tenantId;
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
