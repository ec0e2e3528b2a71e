import { catalogKey, type ReadableCatalog } from '../adapters/warehouse/query/index.js';
import type { Field } from '../adapters/warehouse/index.js';
import { datasetsOfProject, readableDatasets } from '../associations/access.js';
import type { Database } from '../database.js';
import { aggregationRule, ruleOf } from '../tables/analysis-rule.js';

/**
 * The tables a job of `projectId` run by `tenantId` may read, by `dataset_name.table_name`: the
 * project's datasets and those shared into it (src/associations). Another tenant's tables carry
 * their owner's rules (src/adapters/warehouse/query/rules.ts): their private columns are masked
 * and join-only, their aggregation rule applies. A name two readable datasets share is ambiguous (null).
 */
export async function readableCatalog(db: Database, options: { projectId: string; tenantId: string }): Promise<ReadableCatalog> {
  // Side by side (one round trip): the tables are found by their datasets' filter rather than by the ids read.
  const [datasets, tables] = await Promise.all([
    readableDatasets(db, options.projectId),
    db.table.findMany({ where: { dataset: datasetsOfProject(options.projectId), archivedAt: null } }),
  ]);
  const catalog: ReadableCatalog = new Map();
  for (const { dataset, tenantId } of datasets) {
    const shared = tenantId !== options.tenantId;
    for (const table of tables.filter((candidate) => candidate.datasetId === dataset.id)) {
      const key = catalogKey(dataset.name, table.name);
      const fields = table.schema as unknown as Field[];
      catalog.set(
        key,
        catalog.has(key)
          ? null
          : {
              ref: { datasetId: dataset.id, tableId: table.id },
              name: `${dataset.name}.${table.name}`,
              columns: fields.map((field) => ({
                name: field.name,
                type: field.type,
                repeated: field.mode === 'REPEATED',
                masked: field.private && shared,
              })),
              ...(shared && {
                shared: { tenantId, aggregation: aggregationRule(ruleOf(table)), allowExports: dataset.allowExports },
              }),
            },
      );
    }
  }
  return catalog;
}
