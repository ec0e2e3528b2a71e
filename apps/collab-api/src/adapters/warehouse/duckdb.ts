/**
 * The warehouse as one DuckDB database file: a dataset is a DuckDB schema, a table a table.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { types } from 'node:util';
import {
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBResultReader,
  type DuckDBValue,
  quotedIdentifier,
  quotedString,
} from '@duckdb/node-api';
import { AppError, UpstreamError } from '@repo/errors';
import type { TableRef, TableUpdate, Warehouse, WarehouseMetadata } from './interface.js';
import { physicalNames } from './names.js';
import { type Field, type FieldType, planSchemaChange, type SchemaChange } from './schema.js';

/**
 * Column types in DuckDB. REPEATED columns are LISTs of these (`VARCHAR[]`), REQUIRED ones
 * NOT NULL. DATETIME is a civil date and time (no zone), TIMESTAMP an instant; NUMERIC has
 * BigQuery's precision and scale.
 */
const DUCKDB_TYPES: Record<FieldType, string> = {
  STRING: 'VARCHAR',
  INT64: 'BIGINT',
  FLOAT64: 'DOUBLE',
  NUMERIC: 'DECIMAL(38, 9)',
  BOOL: 'BOOLEAN',
  DATE: 'DATE',
  DATETIME: 'TIMESTAMP',
  TIMESTAMP: 'TIMESTAMPTZ',
  TIME: 'TIME',
  BYTES: 'BLOB',
  JSON: 'JSON',
};

/**
 * Opens (or creates) the database file; its folder is created when missing. The instance comes
 * from DuckDB's per-process cache: a file must be open only once in a process, and other modules
 * (query execution) get their own handle on the same database with `DuckDBInstance.fromCache`.
 * The file closes when the last handle does.
 */
export async function openDuckDbWarehouse(file: string): Promise<Warehouse> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    // One cache key per file, however the path was written.
    const instance = await DuckDBInstance.fromCache(path.resolve(file));
    return new DuckDbWarehouse(instance, await instance.connect());
  } catch (error) {
    throw toWarehouseError(error);
  }
}

type Sql = (sql: string, values?: DuckDBValue[]) => Promise<DuckDBResultReader>;

class DuckDbWarehouse implements Warehouse {
  readonly kind = 'duckdb';
  // Mirror operations share one connection and run one at a time, each in a transaction of its
  // own: a DuckDB connection has a single transaction, which interleaved operations would share.
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  // DuckDB cannot comment on a schema, so a dataset keeps no metadata here.
  createDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      await sql(`CREATE SCHEMA ${quotedIdentifier(dataset)}`);
    });
  }

  // Nothing to store (see createDataset), but a missing dataset is reported, not ignored.
  updateDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      const found = await sql('SELECT 1 FROM duckdb_schemas() WHERE database_name = current_database() AND schema_name = $1', [
        dataset,
      ]);
      if (found.currentRowCount === 0) throw new UpstreamError(`Warehouse error: dataset ${dataset} does not exist`);
    });
  }

  deleteDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      await sql(`DROP SCHEMA IF EXISTS ${quotedIdentifier(dataset)} CASCADE`);
    });
  }

  createTable(ref: TableRef, fields: Field[], metadata: WarehouseMetadata = {}): Promise<void> {
    return this.transaction((sql) => createTable(sql, qualifiedName(ref), fields, metadata.description));
  }

  updateTable(ref: TableRef, update: TableUpdate): Promise<void> {
    const table = qualifiedName(ref);
    return this.transaction(async (sql) => {
      const { description } = update;
      if (update.schema) {
        const plan = planSchemaChange(update.schema.from, update.schema.to, {
          tableHasRows: (await countRows(sql, table)) > 0,
        });
        if (plan.kind === 'replace') {
          // The new table keeps the old one's description unless this update sets another.
          const kept = description === undefined ? await tableComment(sql, ref) : description;
          await sql(`DROP TABLE ${table}`);
          await createTable(sql, table, plan.fields, kept);
          return;
        }
        for (const change of plan.changes) await applyChange(sql, table, change);
      }
      if (description !== undefined) await sql(`COMMENT ON TABLE ${table} IS ${commentText(description)}`);
    });
  }

  deleteTable(ref: TableRef): Promise<void> {
    return this.transaction(async (sql) => {
      await sql(`DROP TABLE IF EXISTS ${qualifiedName(ref)}`);
    });
  }

  tableRowCount(ref: TableRef): Promise<number> {
    return this.transaction((sql) => countRows(sql, qualifiedName(ref)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    this.connection.closeSync();
    this.instance.closeSync();
  }

  /** Runs `work` after every operation queued before it, in a transaction rolled back on failure. */
  private transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new UpstreamError('Warehouse error: the warehouse is closed'));
    const sql: Sql = (text, values) => this.connection.runAndReadAll(text, values);
    const result = this.queue.then(async () => {
      await sql('BEGIN TRANSACTION');
      try {
        const value = await work(sql);
        await sql('COMMIT');
        return value;
      } catch (error) {
        // Leave no transaction open for the next operation; the first error is the one to report.
        await sql('ROLLBACK').catch(() => undefined);
        throw toWarehouseError(error);
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }
}

function qualifiedName(ref: TableRef): string {
  const { dataset, table } = physicalNames(ref);
  return `${quotedIdentifier(dataset)}.${quotedIdentifier(table)}`;
}

function columnType(field: Field): string {
  return `${DUCKDB_TYPES[field.type]}${field.mode === 'REPEATED' ? '[]' : ''}`;
}

function commentText(text: string | null | undefined): string {
  return text ? quotedString(text) : 'NULL';
}

async function createTable(sql: Sql, table: string, fields: Field[], description: string | null | undefined): Promise<void> {
  const columns = fields.map(
    (field) => `${quotedIdentifier(field.name)} ${columnType(field)}${field.mode === 'REQUIRED' ? ' NOT NULL' : ''}`,
  );
  await sql(`CREATE TABLE ${table} (${columns.join(', ')})`);
  if (description) await sql(`COMMENT ON TABLE ${table} IS ${commentText(description)}`);
  for (const field of fields) {
    if (field.description)
      await sql(`COMMENT ON COLUMN ${table}.${quotedIdentifier(field.name)} IS ${commentText(field.description)}`);
  }
}

async function applyChange(sql: Sql, table: string, change: SchemaChange): Promise<void> {
  switch (change.kind) {
    case 'add_column': {
      const column = quotedIdentifier(change.field.name);
      await sql(`ALTER TABLE ${table} ADD COLUMN ${column} ${columnType(change.field)}`);
      if (change.field.description) await sql(`COMMENT ON COLUMN ${table}.${column} IS ${commentText(change.field.description)}`);
      return;
    }
    case 'relax_column':
      await sql(`ALTER TABLE ${table} ALTER COLUMN ${quotedIdentifier(change.name)} DROP NOT NULL`);
      return;
    case 'set_description':
      await sql(`COMMENT ON COLUMN ${table}.${quotedIdentifier(change.name)} IS ${commentText(change.description)}`);
      return;
    case 'set_private':
      // Privacy is applied by the app when it returns results; the warehouse has nothing to change.
      return;
  }
}

async function countRows(sql: Sql, table: string): Promise<number> {
  const reader = await sql(`SELECT count(*) FROM ${table}`);
  return Number(reader.getRows()[0]?.[0] ?? 0);
}

async function tableComment(sql: Sql, ref: TableRef): Promise<string | null> {
  const { dataset, table } = physicalNames(ref);
  const reader = await sql(
    'SELECT comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2',
    [dataset, table],
  );
  const comment = reader.getRows()[0]?.[0];
  return typeof comment === 'string' ? comment : null;
}

/**
 * Errors of this module's own (a refused schema change) pass through; DuckDB's become a 502 with
 * the first line of DuckDB's message, which names the problem without the SQL that follows it.
 */
function toWarehouseError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // isNativeError, unlike instanceof, also knows errors made in another realm (jest's sandbox).
  const message = types.isNativeError(error) ? error.message : String(error);
  return new UpstreamError(`Warehouse error: ${message.split('\n')[0]}`, { cause: error });
}
