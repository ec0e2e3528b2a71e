import path from 'node:path';
import { bigQueryOptions } from '../bigquery-client.js';
import type { WarehouseSettings } from '../settings.js';
import { openBigQueryQueryEngine } from './bigquery.js';
import { type DuckDbQueryLimits, openDuckDbQueryEngine } from './duckdb.js';
import type { QueryEngine } from './interface.js';

export { catalogKey, type ReadableCatalog } from './analyze.js';
export * from './interface.js';
export type { DuckDbQueryLimits } from './duckdb.js';

/**
 * Query jobs' engine on the configured warehouse: DuckDB's file (the one createWarehouse opens),
 * or BigQuery, whose exports go to `exportBucket` (the Cloud Storage bucket of STORAGE_BACKEND=gcs).
 * `limits` bound what one query builds on DuckDB (BigQuery has its own).
 */
export async function createQueryEngine(
  settings: WarehouseSettings,
  options: { dataDir: string; exportBucket?: string; limits: DuckDbQueryLimits },
): Promise<QueryEngine> {
  if (settings.COLLAB_WAREHOUSE === 'bigquery') {
    return openBigQueryQueryEngine(bigQueryOptions(settings), { exportBucket: options.exportBucket });
  }
  return openDuckDbQueryEngine(path.resolve(path.join(options.dataDir, 'warehouse', 'warehouse.duckdb')), options.limits);
}
