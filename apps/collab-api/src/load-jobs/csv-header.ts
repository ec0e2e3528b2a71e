/**
 * Whether a CSV file starts with a header: its first record, read from the file's first bytes,
 * names the table's columns. Pure.
 */
import type { Field } from '../adapters/warehouse/index.js';

/** How much of the file is read for it: a first record longer than this is taken for data. */
export const HEADER_PROBE_BYTES = 64 * 1024;

/**
 * The first record of CSV text (comma-delimited, `"`-quoted, quotes doubled inside, quoted
 * values may hold line breaks), a byte order mark skipped; undefined when the text ends inside it
 * without a line break (it may go on past what was read).
 */
export function firstCsvRecord(text: string, complete = false): string[] | undefined {
  const values: string[] = [];
  let value = '';
  let quoted = false;
  let i = text.startsWith('\uFEFF') ? 1 : 0;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') value += c;
      else if (text[i + 1] === '"') value += text[++i];
      else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      values.push(value);
      value = '';
    } else if (c === '\n' || c === '\r') {
      values.push(value);
      return values;
    } else value += c;
  }
  if (!complete || quoted) return undefined;
  values.push(value);
  return values;
}

/**
 * A header names every column of the file after a column of the table (without regard to case or
 * surrounding spaces), each once. A first row of data does not: its values are rarely all exact
 * column names.
 */
export function isHeader(record: string[], fields: Pick<Field, 'name'>[]): boolean {
  const names = new Set(fields.map((field) => field.name.toLowerCase()));
  const seen = new Set<string>();
  return record.every((value) => {
    const name = value.trim().toLowerCase();
    if (!names.has(name) || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}
