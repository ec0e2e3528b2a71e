import path from 'node:path';
import { createBigQueryWarehouse } from './bigquery.js';
import { bigQueryOptions } from './bigquery-client.js';
import { openDuckDbWarehouse } from './duckdb.js';
import type { Warehouse } from './interface.js';
import type { WarehouseSettings } from './settings.js';

export {
  type LoadRequest,
  type LoadResult,
  type PreparedLoad,
  SOURCE_FORMATS,
  type SourceFormat,
  type TableRef,
  type TableUpdate,
  type Warehouse,
  type WarehouseDataset,
  type WarehouseKind,
  type WarehouseMetadata,
  WRITE_DISPOSITIONS,
  type WriteDisposition,
} from './interface.js';
export { LoadFailure, type LoadProblem } from './load/problems.js';
export { physicalNames } from './names.js';
export {
  type Field,
  FIELD_MODES,
  FIELD_TYPES,
  type FieldMode,
  type FieldType,
  fieldInput,
  planSchemaChange,
  type SchemaChange,
  type SchemaPlan,
  tableSchemaInput,
} from './schema.js';
export { checkWarehouseSettings, warehouseSettings, type WarehouseSettings } from './settings.js';

/** The configured warehouse; DuckDB keeps its file at `<dataDir>/warehouse/warehouse.duckdb`. */
export async function createWarehouse(settings: WarehouseSettings, options: { dataDir: string }): Promise<Warehouse> {
  if (settings.COLLAB_WAREHOUSE === 'duckdb') {
    return openDuckDbWarehouse(path.join(options.dataDir, 'warehouse', 'warehouse.duckdb'), {
      memoryLimit: settings.COLLAB_DUCKDB_MEMORY_LIMIT,
      threads: settings.COLLAB_DUCKDB_THREADS,
    });
  }
  return createBigQueryWarehouse(bigQueryOptions(settings));
}
