import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { physicalNames } from '../src/adapters/warehouse/index.js';

/**
 * A second handle on a test app's DuckDB warehouse (the file under its data folder), to read the
 * catalog and write rows as any DuckDB client would.
 */
export async function openWarehouseCatalog(dataDir: string) {
  const instance = await DuckDBInstance.fromCache(path.join(dataDir, 'warehouse', 'warehouse.duckdb'));
  const connection = await instance.connect();
  const rows = async (sql: string, values: string[] = []) => (await connection.runAndReadAll(sql, values)).getRowObjectsJS();
  return {
    async datasetExists(datasetId: string): Promise<boolean> {
      const { dataset } = physicalNames({ datasetId });
      return (await rows('SELECT 1 FROM duckdb_schemas() WHERE schema_name = $1', [dataset])).length === 1;
    },
    /** Every schema of the app's naming (`ds_…`). */
    async schemas(): Promise<string[]> {
      const found = await rows(
        "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database() AND schema_name LIKE 'ds\\_%' ESCAPE '\\'",
      );
      return found.map((row) => row.schema_name as string);
    },
    /** The tables of a dataset by their warehouse names. */
    async tablesOf(datasetId: string): Promise<string[]> {
      const { dataset } = physicalNames({ datasetId });
      const found = await rows('SELECT table_name FROM duckdb_tables() WHERE schema_name = $1 ORDER BY table_name', [dataset]);
      return found.map((row) => row.table_name as string);
    },
    async columnsOf(datasetId: string, tableId: string) {
      const { dataset, table } = physicalNames({ datasetId, tableId });
      return rows(
        `SELECT column_name AS name, data_type AS type, is_nullable AS nullable
           FROM duckdb_columns() WHERE schema_name = $1 AND table_name = $2 ORDER BY column_index`,
        [dataset, table],
      );
    },
    /** Runs statements as another client of the warehouse would, behind the app's back. */
    async run(sql: string): Promise<void> {
      await connection.run(sql);
    },
    /** Drops a dataset behind the app's back, as another client of the warehouse could. */
    async dropDataset(datasetId: string): Promise<void> {
      await connection.run(`DROP SCHEMA IF EXISTS ${physicalNames({ datasetId }).dataset} CASCADE`);
    },
    async insert(datasetId: string, tableId: string, values: string): Promise<void> {
      const { dataset, table } = physicalNames({ datasetId, tableId });
      await connection.run(`INSERT INTO ${dataset}.${table} VALUES ${values}`);
    },
    /** A table's rows in insertion order, as JSON would show them. */
    async rows(datasetId: string, tableId: string): Promise<Record<string, unknown>[]> {
      const { dataset, table } = physicalNames({ datasetId, tableId });
      return (await connection.runAndReadAll(`SELECT * FROM ${dataset}.${table}`)).getRowObjectsJson();
    },
    close(): void {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

export type WarehouseCatalog = Awaited<ReturnType<typeof openWarehouseCatalog>>;
