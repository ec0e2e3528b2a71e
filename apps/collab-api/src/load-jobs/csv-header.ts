/**
 * Whether a CSV file starts with a header: its first record, read from the file's first bytes,
 * names the table's columns. Pure.
 */
import type { Field } from '../adapters/warehouse/index.js';

/**
 * How much of the file is read for it: a first record longer than this is taken for data. A header
 * of the widest table (10,000 columns of 300-character names, quoted, with spaces around) fits:
 * 64 KB took a header of 250 long names for a row of data.
 */
export const HEADER_PROBE_BYTES = 4 * 1024 * 1024;

/**
 * Where the first record of CSV text ends (the index of the line break after it), scanning on from
 * `scan` (what an earlier call returned, for text that has grown since): -1 while it has not ended.
 * Linear over the text however often it is called, as a file is read a chunk at a time.
 */
export function firstRecordEnd(text: string, scan: FirstRecordScan): number {
  for (; scan.at < text.length; scan.at++) {
    const c = text.charCodeAt(scan.at);
    if (c === QUOTE) scan.quoted = !scan.quoted;
    else if (!scan.quoted && (c === LF || c === CR)) return scan.at;
  }
  return -1;
}

/** Where firstRecordEnd's scan stands: how far it has read, and whether it is inside quotes (a doubled quote flips twice). */
export interface FirstRecordScan {
  at: number;
  quoted: boolean;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

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
