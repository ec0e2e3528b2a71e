/** DuckDB SQL of the warehouse's tables, shared by its mirror (duckdb.ts) and its loads (load/duckdb.ts). */
import { types } from 'node:util';
import { type DuckDBResultReader, type DuckDBValue, quotedIdentifier, quotedString } from '@duckdb/node-api';
import type { TableRef } from './interface.js';
import { physicalNames } from './names.js';
import type { Field, FieldType, SchemaChange } from './schema.js';

/** A DuckDB error's message: the native addon's errors are native errors, of whatever realm (Jest's tests run in another). */
export function duckDbMessage(error: unknown): string {
  return types.isNativeError(error) ? error.message : String(error);
}

/** Whether DuckDB refused an allocation past its memory limit. */
export function isOutOfMemory(error: unknown): boolean {
  return duckDbMessage(error).startsWith('Out of Memory Error');
}

export type Sql = (sql: string, values?: DuckDBValue[]) => Promise<DuckDBResultReader>;

/**
 * Column types in DuckDB. REPEATED columns are LISTs of these (`VARCHAR[]`), REQUIRED ones
 * NOT NULL. DATETIME is a civil date and time (no zone), TIMESTAMP an instant; NUMERIC has
 * BigQuery's precision and scale.
 */
export const DUCKDB_TYPES: Record<FieldType, string> = {
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

export function qualifiedName(ref: TableRef): string {
  const { dataset, table } = physicalNames(ref);
  return `${quotedIdentifier(dataset)}.${quotedIdentifier(table)}`;
}

export function columnType(field: Pick<Field, 'type' | 'mode'>): string {
  return `${DUCKDB_TYPES[field.type]}${field.mode === 'REPEATED' ? '[]' : ''}`;
}

export function commentText(text: string | null | undefined): string {
  return text ? quotedString(text) : 'NULL';
}

/** One CREATE statement with every column, and the table's description if it has one. */
export async function createTable(
  sql: Sql,
  table: string,
  fields: Field[],
  description: string | null | undefined,
): Promise<void> {
  await sql(createTableStatement(table, fields));
  if (description) await sql(`COMMENT ON TABLE ${table} IS ${commentText(description)}`);
}

export function createTableStatement(table: string, fields: Field[]): string {
  const columns = fields.map(
    (field) => `${quotedIdentifier(field.name)} ${columnType(field)}${field.mode === 'REQUIRED' ? ' NOT NULL' : ''}`,
  );
  return `CREATE TABLE IF NOT EXISTS ${table} (${columns.join(', ')})`;
}

/**
 * The statements of in-place changes, each of which may be run again (a change applied again
 * after an interruption). Descriptions are not kept here, and privacy is applied by the app
 * when it returns results: neither needs a statement.
 */
export function alterStatements(table: string, changes: SchemaChange[]): string[] {
  return changes.flatMap((change) => {
    switch (change.kind) {
      case 'add_column':
        return [
          `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${quotedIdentifier(change.field.name)} ${columnType(change.field)}`,
        ];
      case 'relax_column':
        return [`ALTER TABLE ${table} ALTER COLUMN ${quotedIdentifier(change.name)} DROP NOT NULL`];
      case 'set_description':
      case 'set_private':
        return [];
    }
  });
}

export async function countRows(sql: Sql, table: string): Promise<number> {
  const reader = await sql(`SELECT count(*) FROM ${table}`);
  return Number(reader.getRows()[0]?.[0] ?? 0);
}

/** The table's columns as DuckDB has them (name, type, NOT NULL), in order. */
export async function tableColumns(sql: Sql, ref: TableRef): Promise<{ name: string; type: string; notNull: boolean }[]> {
  const { dataset, table } = physicalNames(ref);
  const reader = await sql(
    `SELECT column_name, data_type, NOT is_nullable FROM duckdb_columns()
      WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 ORDER BY column_index`,
    [dataset, table],
  );
  return reader.getRows().map(([name, type, notNull]) => ({ name: String(name), type: String(type), notNull: notNull === true }));
}

/** Whether DuckDB's columns are exactly `fields` (names, types and modes; descriptions and privacy live in the records). */
export function sameColumns(columns: { name: string; type: string; notNull: boolean }[], fields: Field[]): boolean {
  return (
    columns.length === fields.length &&
    columns.every((column, i) => {
      const field = fields[i]!;
      return (
        column.name === field.name &&
        comparable(column.type) === comparable(columnType(field)) &&
        column.notNull === (field.mode === 'REQUIRED')
      );
    })
  );
}

// duckdb_columns() writes `DECIMAL(38,9)` and `TIMESTAMP WITH TIME ZONE` for what DDL calls `DECIMAL(38, 9)` and `TIMESTAMPTZ`.
function comparable(type: string): string {
  return type.toUpperCase().replace('TIMESTAMPTZ', 'TIMESTAMP WITH TIME ZONE').replace(/\s+/g, '');
}
