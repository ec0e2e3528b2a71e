/**
 * CSV: comma-delimited, `"`-quoted (quotes doubled inside), UTF-8 with or without a byte order
 * mark; quoted values may hold commas and line breaks. Read by DuckDB's CSV reader as text;
 * records it cannot read (too many or too few values, a quote left open, bad UTF-8) are
 * collected as problems with their row. Into a table with known columns, insertCsv first tries
 * the file the fast way, typed and straight into the table.
 */
import { quotedString } from '@duckdb/node-api';
import { duckDbMessage } from '../duckdb-sql.js';
import type { Field } from '../schema.js';
import { LoadFailure, problemsFailure } from './problems.js';
import { checkedValue, columnNames, csvType, inferredField, stagedColumn } from './rules.js';
import {
  LINE_OPTIONS,
  matchColumns,
  type Reader,
  type ReaderOptions,
  rowsOf,
  type Sql,
  stageView,
  unreadable,
} from './staging.js';

const DIALECT = `delim = ',', quote = '"', escape = '"', ${LINE_OPTIONS}`;

/**
 * Why DuckDB's CSV reader could not read the file. Told one line ending, it stops at another with
 * "The CSV Parser state machine reached an invalid state" (a header ending in CRLF, rows in LF).
 */
function unreadableCsv(error: unknown): LoadFailure {
  if (!duckDbMessage(error).includes('state machine reached an invalid state')) return unreadable('CSV', error);
  return new LoadFailure(
    'The file could not be read as CSV: its lines end in more than one way (CRLF and LF mixed, say); use one line ending throughout',
  );
}

/** How the file's columns (c0, c1, ... in file order) stand to the table's. */
interface Layout {
  header: boolean;
  headings: string[];
  fields: Field[];
  /** The file column of a field, if the file has it. */
  columnOf: (field: Field) => string | undefined;
}

export const readCsv: Reader = async (sql, file, options) => {
  const path = quotedString(file);
  const { header, headings, fields, columnOf } = await layout(sql, path, options);
  const columns = headings.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  try {
    await sql(
      `CREATE TEMP TABLE raw AS SELECT * FROM read_csv(${path}, header = ${header}, auto_detect = false, columns = {${columns}},
         ${DIALECT}, store_rejects = true)`,
    );
  } catch (error) {
    throw unreadableCsv(error);
  }
  const [{ count }] = (await rowsOf(sql, 'SELECT count(*)::INTEGER AS count FROM reject_errors')) as [{ count: number }];
  if (count > 0) {
    const rejected = await rowsOf(
      sql,
      `SELECT line, column_name, error_message FROM reject_errors ORDER BY line, column_idx LIMIT 10`,
    );
    const problems = rejected.map((row) => ({
      row: Number(row.line) - (header ? 1 : 0),
      column: fileColumn(row.column_name, headings),
      reason: String(row.error_message),
    }));
    throw problemsFailure(problems, count, 'records that cannot be read as CSV');
  }
  await stageView(sql, 'raw', fields, columnOf);
  return { fields, declaredModes: false };
};

/**
 * The fast way into `table` (whose columns are `options.fields`): one statement, DuckDB's CSV
 * reader reading each column as its field's type where that reading is the rules' own (csvType),
 * as text through the rules otherwise (checkedValue). It fails at the first value that does not
 * fit or record that cannot be read, with no list of problems: then readCsv, the staged way,
 * finds them. Answers the rows inserted.
 */
export async function insertCsv(
  sql: Sql,
  file: string,
  table: string,
  options: ReaderOptions & { fields: Field[] },
): Promise<number> {
  const path = quotedString(file);
  const { header, headings, fields, columnOf } = await layout(sql, path, options);
  const types = headings.map((_, i) => {
    const field = fields.find((candidate) => columnOf(candidate) === `c${i}`);
    return `'c${i}': '${(field && csvType(field)) ?? 'VARCHAR'}'`;
  });
  const values = fields.map((field) => {
    const column = columnOf(field);
    return column === undefined ? checkedValue(field, 'NULL::VARCHAR', false) : checkedValue(field, column, !!csvType(field));
  });
  const inserted = await sql(
    `INSERT INTO ${table} (${fields.map(stagedColumn).join(', ')}) SELECT ${values.join(', ')}
       FROM read_csv(${path}, header = ${header}, auto_detect = false, columns = {${types.join(', ')}}, ${DIALECT})`,
  );
  return Number(inserted.getRows()[0]?.[0] ?? 0);
}

/**
 * The file's columns: with autodetect, as DuckDB's sniffer finds them (header or not, and the
 * fields); else the table's, matched by name to the file's header when it has one.
 */
async function layout(sql: Sql, path: string, options: ReaderOptions): Promise<Layout> {
  let header: boolean;
  let headings: string[];
  let fields;
  try {
    if (options.fields === undefined) {
      // DuckDB's sniffer decides whether there is a header and what each column holds.
      const [sniffed] = await rowsOf(
        sql,
        `SELECT "HasHeader" AS header, "Columns" AS columns FROM sniff_csv(${path}, ${DIALECT})`,
      );
      const columns = sniffed!.columns as { name: string; type: string }[];
      header = sniffed!.header === true;
      headings = columnNames(header ? columns.map((column) => column.name) : columns.map((_, i) => `column_${i + 1}`));
      fields = columns.map((column, i) => inferredField(headings[i]!, column.type));
    } else {
      // The header's names as the app read them (DuckDB would read a whole 32 MB buffer to tell them).
      header = options.csvHeader !== undefined;
      fields = options.fields;
      headings = options.csvHeader ?? fields.map((field) => field.name);
    }
  } catch (error) {
    throw unreadableCsv(error);
  }
  const matched = options.fields === undefined || !header ? undefined : matchColumns(headings, fields);
  // First position of each heading, so that 10,000 columns are matched in linear time.
  const headingIndex = new Map<string, number>();
  headings.forEach((heading, i) => headingIndex.set(heading, headingIndex.get(heading) ?? i));
  const fieldIndex = new Map(fields.map((field, i) => [field, i]));
  const columnOf = (field: Field) => {
    const index = matched ? (headingIndex.get(matched.get(field.name) ?? '') ?? -1) : (fieldIndex.get(field) ?? -1);
    return index >= 0 && index < headings.length ? `c${index}` : undefined;
  };
  return { header, headings, fields, columnOf };
}

/** The file's own heading for a rejected value's column (DuckDB names it by our c0, c1, ...). */
function fileColumn(name: unknown, headings: string[]): string | null {
  const index = typeof name === 'string' ? /^c(\d+)$/.exec(name)?.[1] : undefined;
  return index === undefined ? null : (headings[Number(index)] ?? null);
}
