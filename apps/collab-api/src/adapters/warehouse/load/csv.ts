/**
 * CSV: comma-delimited, `"`-quoted (quotes doubled inside), UTF-8 with or without a byte order
 * mark; quoted values may hold commas and line breaks. Read by DuckDB's CSV reader as text;
 * records it cannot read (too many or too few values, a quote left open, bad UTF-8) are
 * collected as problems with their row.
 */
import { quotedString } from '@duckdb/node-api';
import { problemsFailure } from './problems.js';
import { columnNames, inferredField } from './rules.js';
import { describe, MAX_LINE_BYTES, matchColumns, type Reader, rowsOf, stageView, unreadable } from './staging.js';

const DIALECT = `delim = ',', quote = '"', escape = '"', max_line_size = ${MAX_LINE_BYTES}`;

export const readCsv: Reader = async (sql, file, options) => {
  const path = quotedString(file);
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
      header = options.csvHeader ?? false;
      fields = options.fields;
      headings = header
        ? (await describe(sql, `read_csv(${path}, header = true, all_varchar = true, ${DIALECT})`)).map((column) => column.name)
        : fields.map((field) => field.name);
    }
  } catch (error) {
    throw unreadable('CSV', error);
  }
  const matched = options.fields === undefined || !header ? undefined : matchColumns(headings, fields);
  // The file's columns under names of their own (c0, c1, ...), as text, in file order.
  const columns = headings.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  try {
    await sql(
      `CREATE TEMP TABLE raw AS SELECT * FROM read_csv(${path}, header = ${header}, auto_detect = false, columns = {${columns}},
         ${DIALECT}, store_rejects = true)`,
    );
  } catch (error) {
    throw unreadable('CSV', error);
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
  await stageView(sql, 'raw', fields, (field) => {
    const index = matched ? headings.indexOf(matched.get(field.name) ?? '') : fields.indexOf(field);
    return index >= 0 && index < headings.length ? `c${index}` : undefined;
  });
  return { fields, declaredModes: false };
};

/** The file's own heading for a rejected value's column (DuckDB names it by our c0, c1, ...). */
function fileColumn(name: unknown, headings: string[]): string | null {
  const index = typeof name === 'string' ? /^c(\d+)$/.exec(name)?.[1] : undefined;
  return index === undefined ? null : (headings[Number(index)] ?? null);
}
