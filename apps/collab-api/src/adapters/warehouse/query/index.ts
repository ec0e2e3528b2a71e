import path from 'node:path';
import type { WarehouseSettings } from '../settings.js';
import { openDuckDbQueryEngine } from './duckdb.js';
import type { QueryEngine } from './interface.js';

export { catalogKey, type ReadableCatalog } from './analyze.js';
export * from './interface.js';

/** Query jobs' engine on the configured warehouse: DuckDB's file (the one createWarehouse opens); none on BigQuery yet. */
export async function createQueryEngine(settings: WarehouseSettings, options: { dataDir: string }): Promise<QueryEngine | null> {
  if (settings.COLLAB_WAREHOUSE !== 'duckdb') return null;
  return openDuckDbQueryEngine(path.resolve(path.join(options.dataDir, 'warehouse', 'warehouse.duckdb')));
}
