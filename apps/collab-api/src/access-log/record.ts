import type { ReadableCatalog } from '../adapters/warehouse/query/index.js';
import type { Database } from '../database.js';
import type { AppliedRule, ReferencedTable } from './schemas.js';

/** The tables of `keys` as the API names them. */
export function referencedTables(catalog: ReadableCatalog, keys: string[]): ReferencedTable[] {
  return keys.flatMap((key) => {
    const table = catalog.get(key);
    return table ? [{ dataset_id: table.ref.datasetId, table_id: table.ref.tableId, name: table.name ?? key }] : [];
  });
}

/** The rules a query over `keys` obeys: those of the other tenants' tables among them, as `catalog` holds them. Pure. */
export function appliedRules(catalog: ReadableCatalog, keys: string[]): AppliedRule[] {
  return referencedTables(catalog, keys).flatMap((referenced, i) => {
    const table = catalog.get(keys[i]!)!;
    if (!table.shared) return [];
    const rule = table.shared.aggregation;
    return [
      {
        ...referenced,
        tenant_id: table.shared.tenantId,
        join_only_columns: table.columns.filter((column) => column.masked).map((column) => column.name),
        analysis_rule: rule && { type: 'aggregation', privacy_unit: rule.privacyUnit, min_distinct: rule.minDistinct },
        allow_exports: table.shared.allowExports,
      },
    ];
  });
}

/**
 * Records, for its owners' access logs, the other tenants' tables a job references and the rules
 * it applies (those of `catalog`, read when it started). A retry records them again, once each.
 */
export async function recordReads(
  db: Database,
  job: { id: string; tenantId: string },
  catalog: ReadableCatalog,
  keys: string[],
): Promise<void> {
  const rules = appliedRules(catalog, keys);
  if (rules.length === 0) return;
  await db.$transaction([
    db.queryJobRead.createMany({
      data: rules.map((rule) => ({
        queryJobId: job.id,
        tenantId: job.tenantId,
        ownerTenantId: rule.tenant_id,
        datasetId: rule.dataset_id,
        tableId: rule.table_id,
      })),
      skipDuplicates: true,
    }),
    db.queryJob.update({ where: { id: job.id }, data: { appliedRules: rules } }),
  ]);
}
