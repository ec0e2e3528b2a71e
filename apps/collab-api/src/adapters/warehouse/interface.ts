import type { Field } from './schema.js';

export type WarehouseKind = 'duckdb' | 'bigquery';

/** A table by the app's ids; the warehouse derives its own names from them (see physicalNames). */
export interface TableRef {
  datasetId: string;
  tableId: string;
}

/**
 * Metadata of a dataset or table. In updates, an absent key leaves the value as it is and a
 * `null` description removes it. DuckDB keeps only table and column descriptions (it has no
 * comments on schemas, and no friendly names or labels); BigQuery keeps all of it.
 */
export interface WarehouseMetadata {
  description?: string | null;
  /** The app's name for the dataset or table; the warehouse's own names never change. */
  friendlyName?: string;
  /** Set on creation, merged on update. BigQuery label keys and values: lower case, digits, `_`, `-`. */
  labels?: Record<string, string>;
}

export interface TableUpdate extends WarehouseMetadata {
  /** The table's schema as the app stored it, and the schema wanted. */
  schema?: { from: Field[]; to: Field[] };
}

/**
 * The analytics warehouse that mirrors datasets and tables. Every method applies its change
 * synchronously, so a caller can run it inside its own database transaction and roll that back
 * when the warehouse fails.
 *
 * Errors: `UpstreamError` (502) with the warehouse's reason when the warehouse fails;
 * `ConflictError` (409) from updateTable when a schema change is not allowed (see planSchemaChange).
 */
export interface Warehouse {
  readonly kind: WarehouseKind;
  createDataset(datasetId: string, metadata?: WarehouseMetadata): Promise<void>;
  updateDataset(datasetId: string, metadata: WarehouseMetadata): Promise<void>;
  /** Drops the dataset and its tables; a dataset already gone is no error. */
  deleteDataset(datasetId: string): Promise<void>;
  createTable(ref: TableRef, fields: Field[], metadata?: WarehouseMetadata): Promise<void>;
  /** Changes metadata and, planned by planSchemaChange against the table's current row count, the schema. */
  updateTable(ref: TableRef, update: TableUpdate): Promise<void>;
  /** A table already gone is no error. */
  deleteTable(ref: TableRef): Promise<void>;
  tableRowCount(ref: TableRef): Promise<number>;
  /** Waits for operations under way, then releases the warehouse. */
  close(): Promise<void>;
}
