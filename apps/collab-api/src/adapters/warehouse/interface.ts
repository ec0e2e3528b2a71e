import type { Field } from './schema.js';

export type WarehouseKind = 'duckdb' | 'bigquery';

/** A table by the app's ids; the warehouse derives its own names from them (see physicalNames). */
export interface TableRef {
  datasetId: string;
  tableId: string;
}

/**
 * Metadata of a dataset or table. In updates, an absent key leaves the value as it is and a
 * `null` description removes it. DuckDB keeps only table descriptions (it has no comments on
 * schemas, and no friendly names or labels; column descriptions stay in the app's records, see
 * duckdb.ts); BigQuery keeps all of it, column descriptions in its schema.
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

/** A dataset of this app in the warehouse (its physical name has the form physicalNames gives), with its tables. */
export interface WarehouseDataset {
  datasetId: string;
  tableIds: string[];
}

export const SOURCE_FORMATS = ['CSV', 'JSON', 'AVRO', 'PARQUET', 'ORC'] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

export const WRITE_DISPOSITIONS = ['WRITE_APPEND', 'WRITE_TRUNCATE', 'WRITE_EMPTY'] as const;
export type WriteDisposition = (typeof WRITE_DISPOSITIONS)[number];

/** A file to load into a table. */
export interface LoadRequest {
  /** The load job's id. A load is done at most once per id (see findLoad), however often it is asked for. */
  loadId: string;
  format: SourceFormat;
  disposition: WriteDisposition;
  /** The table's columns as the app stores them; the file's values must fit them unless `autodetect`. */
  fields: Field[];
  /** The columns are inferred from the file and replace the table's (see LoadResult.fields). */
  autodetect: boolean;
  /**
   * For CSV without autodetect: the names of the file's first record when it is a header (see
   * csv-header.ts), or none when the file starts with data.
   */
  csvHeader?: string[] | undefined;
  /** The file: its object-storage URI (BigQuery reads `gs://` ones itself), and a local copy made on demand (DuckDB). */
  source: { uri: string; localFile: () => Promise<string> };
  /** Aborting stops the load where the warehouse can stop it; nothing is loaded then. */
  signal: AbortSignal;
}

export interface LoadResult {
  rowsLoaded: number;
  bytesProcessed: number;
  /**
   * The columns the load gave the table, when the records must take them (autodetect); undefined
   * when the records already have them.
   */
  fields?: Field[];
}

/** A load read and checked, not yet committed: nothing is visible in the table until `commit`. */
export interface PreparedLoad {
  /** The columns the table will have; undefined until commit where the warehouse infers them while loading (BigQuery). */
  fields: Field[] | undefined;
  /** Makes the rows (and new columns) visible at once, or nothing: throws LoadFailure, or the warehouse's error. */
  commit(): Promise<LoadResult>;
  /** Drops what was prepared. */
  abort(): Promise<void>;
}

/**
 * The analytics warehouse that mirrors datasets and tables. Every method applies its change
 * before it returns, and may be called again with the same change after an interruption (see
 * src/warehouse-changes, which calls it outside any database transaction): creating what is
 * already there, or deleting what is gone, is no error. Since physical names come from record
 * ids, an object already there can only be the same record's.
 *
 * Errors: `UpstreamError` (502) with the warehouse's reason when the warehouse fails, its message
 * naming no physical name (withoutPhysicalNames); `ConflictError` (409) from updateTable when a
 * schema change is not allowed (see planSchemaChange).
 */
export interface Warehouse {
  readonly kind: WarehouseKind;
  createDataset(datasetId: string, metadata?: WarehouseMetadata): Promise<void>;
  updateDataset(datasetId: string, metadata: WarehouseMetadata): Promise<void>;
  /** Drops the dataset and its tables. */
  deleteDataset(datasetId: string): Promise<void>;
  createTable(ref: TableRef, fields: Field[], metadata?: WarehouseMetadata): Promise<void>;
  /** Changes metadata and, planned by planSchemaChange against the table's current row count, the schema. */
  updateTable(ref: TableRef, update: TableUpdate): Promise<void>;
  deleteTable(ref: TableRef): Promise<void>;
  /** Rows of the table; null when there is no such table. */
  tableRowCount(ref: TableRef): Promise<number | null>;
  /**
   * Reads and checks a file for loading into the table (its columns changed to the inferred ones
   * with autodetect, replaced or emptied as the disposition says). A file whose values do not fit,
   * or that cannot be read, throws LoadFailure with its problems. No database transaction may be
   * open while it runs: it can take minutes.
   */
  prepareLoad(table: TableRef, request: LoadRequest): Promise<PreparedLoad>;
  /** The outcome of the load `loadId` if it was committed (by an earlier attempt that was then interrupted). */
  findLoad(table: TableRef, loadId: string): Promise<LoadResult | undefined>;
  /** Every dataset of this app, with its tables; objects named otherwise are not listed. */
  listDatasets(): Promise<WarehouseDataset[]>;
  /** Waits for operations under way, then releases the warehouse. */
  close(): Promise<void>;
}
