const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Names of a dataset and table in the warehouse, derived from their ids only: user-written names
 * never reach DDL, and renaming a dataset or table never touches the warehouse. Both forms are
 * valid unquoted identifiers in DuckDB and valid BigQuery dataset and table ids.
 *
 * `3f2a…-…` → dataset `ds_3f2a…_…`, table `t_…` (lower case, hyphens as underscores).
 */
export function physicalNames(ref: { datasetId: string; tableId: string }): { dataset: string; table: string };
export function physicalNames(ref: { datasetId: string }): { dataset: string };
export function physicalNames(ref: { datasetId: string; tableId?: string }): { dataset: string; table?: string } {
  const dataset = `ds_${identifierPart(ref.datasetId)}`;
  return ref.tableId === undefined ? { dataset } : { dataset, table: `t_${identifierPart(ref.tableId)}` };
}

function identifierPart(id: string): string {
  // Ids come from the app's database, never from a request, so anything else is a bug.
  if (!UUID.test(id)) throw new TypeError(`Warehouse ids must be UUIDs, got ${JSON.stringify(id)}`);
  return id.toLowerCase().replaceAll('-', '_');
}
