/**
 * Parquet, read by DuckDB: the file's columns are matched to the table's by name (without
 * regard to case) and staged as text like every other format, so the same rules check them.
 */
import { quotedIdentifier, quotedString } from '@duckdb/node-api';
import { columnNames, inferredField } from './rules.js';
import { describe, matchColumns, type Reader, stageView, unreadable } from './staging.js';

export const readParquet: Reader = async (sql, file, options) => {
  const relation = `read_parquet(${quotedString(file)})`;
  let columns;
  try {
    columns = await describe(sql, relation);
    await sql(`CREATE TEMP TABLE raw AS SELECT * FROM ${relation}`);
  } catch (error) {
    throw unreadable('Parquet', error);
  }
  const names = options.fields ? columns.map((column) => column.name) : columnNames(columns.map((column) => column.name));
  const fields = options.fields ?? columns.map((column, i) => inferredField(names[i]!, column.type));
  const matched = options.fields
    ? matchColumns(names, fields)
    : new Map(fields.map((field, i) => [field.name, columns[i]!.name]));
  const typeOf = new Map(columns.map((column) => [column.name, column.type]));
  await stageView(sql, 'raw', fields, (field) => {
    const column = matched.get(field.name);
    return column === undefined ? undefined : asText(quotedIdentifier(column), typeOf.get(column)!);
  });
  return { fields, declaredModes: false };
};

/** A Parquet value as the text the rules read: bytes in base64, nested values as JSON. */
function asText(column: string, type: string): string {
  if (type === 'BLOB') return `to_base64(${column})`;
  if (/[[\]]|^(STRUCT|MAP|UNION)/.test(type)) return `CAST(to_json(${column}) AS VARCHAR)`;
  return `CAST(${column} AS VARCHAR)`;
}
