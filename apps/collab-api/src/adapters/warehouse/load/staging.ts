import type { DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';
import type { Field } from '../schema.js';
import { duckDbMessage, isOutOfMemory } from '../duckdb-sql.js';
import { LoadFailure, type LoadProblem, problemsFailure } from './problems.js';
import { stagedColumn } from './rules.js';

export type Sql = (text: string, values?: DuckDBValue[]) => Promise<DuckDBResultReader>;

export interface ReaderOptions {
  /** The table's columns; undefined with autodetect, when the reader infers them. */
  fields: Field[] | undefined;
  /** CSV without autodetect: the header's names, when the first record is a header. */
  csvHeader: string[] | undefined;
}

/** The columns a reader staged: those asked for, or those inferred (with modes the file declares, if it does). */
export interface Staged {
  fields: Field[];
  /** Whether the file declares the columns' modes (Avro); otherwise autodetect infers them from the values. */
  declaredModes: boolean;
}

/**
 * Reads a file into the temporary table `staged`: `row_no` (the row's number in the file, from
 * 1) and one text column per table column (null where the file has none), in file order; a file
 * it cannot read throws LoadFailure.
 */
export type Reader = (sql: Sql, file: string, options: ReaderOptions) => Promise<Staged>;

// A line or value longer than this is refused (DuckDB's default is 2 MB). DuckDB's readers take
// buffers of twice this out of its memory limit (COLLAB_DUCKDB_MEMORY_LIMIT): 64 MB failed in 256MB.
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** DuckDB's CSV reader's options for MAX_LINE_BYTES (its own buffer, 16 lines long, would take 256 MB). */
export const LINE_OPTIONS = `max_line_size = ${MAX_LINE_BYTES}, buffer_size = ${2 * MAX_LINE_BYTES}`;

/** The rows of a statement as plain objects. */
export async function rowsOf(sql: Sql, text: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]> {
  return (await sql(text, values)).getRowObjectsJS();
}

/** Columns of a relation, as DESCRIBE gives them. */
export async function describe(sql: Sql, relation: string): Promise<{ name: string; type: string }[]> {
  const rows = await rowsOf(sql, `DESCRIBE SELECT * FROM ${relation}`);
  return rows.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
}

/**
 * The file's columns matched to the table's by name, without regard to case. A file column the
 * table does not have is a problem (reported as the file's, with no row).
 */
export function matchColumns(fileColumns: string[], fields: Field[]): Map<string, string> {
  const byName = new Map(fields.map((field) => [field.name.toLowerCase(), field.name]));
  const matched = new Map<string, string>();
  const unknown: LoadProblem[] = [];
  for (const column of fileColumns) {
    const field = byName.get(column.toLowerCase());
    if (field === undefined || matched.has(field)) {
      unknown.push({
        row: null,
        column,
        reason: field ? 'the file has this column twice' : 'the table has no column of this name',
      });
    } else {
      matched.set(field, column);
    }
  }
  if (unknown.length > 0) throw problemsFailure(unknown, unknown.length, "the file's columns do not match the table's");
  return matched;
}

/**
 * SQL for the number (from 1) of a row of `table`, a temporary table filled in file order: rows
 * written in an open transaction have rowids from a large base, in order.
 */
export async function rowNumber(sql: Sql, table: string): Promise<string> {
  const [first] = await rowsOf(sql, `SELECT coalesce(min(rowid), 0)::VARCHAR AS first FROM ${table}`);
  return `(rowid - ${BigInt(String(first!.first))} + 1)`;
}

/**
 * `staged` as a view over `relation` (a temporary table in file order): `row_no`, then each
 * field's column as text through `text` (NULL when the file has none).
 */
export async function stageView(
  sql: Sql,
  relation: string,
  fields: Field[],
  text: (field: Field) => string | undefined,
): Promise<void> {
  const columns = fields.map((field) => `${text(field) ?? 'NULL::VARCHAR'} AS ${stagedColumn(field)}`);
  await sql(
    `CREATE TEMP VIEW staged AS SELECT ${await rowNumber(sql, relation)} AS row_no, ${columns.join(', ')} FROM ${relation}`,
  );
}

/**
 * DuckDB's Out of Memory error as the load's failure, which is not retried: another attempt needs
 * as much (a 2,000-column JSON file was tried for 80 s before). Any other error as it is.
 */
export function outOfMemory(error: unknown): unknown {
  if (!isOutOfMemory(error)) return error;
  const message = duckDbMessage(error);
  return new LoadFailure(
    `DuckDB ran out of memory for this file (${message.split('\n')[0]!.replace(/^Out of Memory Error: /, '')}): ` +
      'raise COLLAB_DUCKDB_MEMORY_LIMIT, or load fewer columns or rows at a time; nothing was loaded',
  );
}

/** A reader's failure to read the file at all, with DuckDB's reason (its first line, no paths). */
export function unreadable(format: string, error: unknown): LoadFailure {
  const message = duckDbMessage(error);
  const reason = message.split('\n')[0]!.replace(/(?<=^|[\s"'(])\/[^\s"']+/g, '<file>');
  return new LoadFailure(`The file could not be read as ${format}: ${reason}`);
}
