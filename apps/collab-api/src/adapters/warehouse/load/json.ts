/**
 * Newline-delimited JSON: one object per line, its keys the columns. Each line is read as text
 * first, so that every line that is not a JSON object, and every key the table lacks, is
 * reported with its line; the values are then taken out of the objects as text (nested arrays
 * and objects as their JSON).
 */
import { createReadStream } from 'node:fs';
import { quotedString } from '@duckdb/node-api';
import type { Field } from '../schema.js';
import { LoadFailure, problemsFailure } from './problems.js';
import { columnNames, inferredField, stagedColumn } from './rules.js';
import { describe, LINE_OPTIONS, MAX_LINE_BYTES, type Reader, rowNumber, rowsOf, unreadable } from './staging.js';

// The unit separator never occurs in JSON text (control characters are escaped there), so each line is one value.
const AS_LINES = `columns = {'line': 'VARCHAR'}, header = false, auto_detect = false, delim = E'\\x1F', quote = '', escape = '',
  ${LINE_OPTIONS}, store_rejects = true`;

/** The temporary table `lines`: the file's lines as text, in order (blank ones null). */
export async function readLines(sql: Parameters<Reader>[0], file: string, format = 'newline-delimited JSON'): Promise<void> {
  try {
    await sql(`CREATE TEMP TABLE lines AS SELECT line FROM read_csv(${quotedString(file)}, ${AS_LINES})`);
  } catch (error) {
    throw unreadable(format, error);
  }
}

/**
 * How deep a line may nest arrays and objects: BigQuery's limit for JSON. DuckDB's JSON reader
 * recurses per level and crashed the whole process (SIGSEGV) on a 200 KB line 100,000 levels deep.
 */
export const MAX_JSON_DEPTH = 500;

/**
 * Pure: follows JSON text chunk by chunk (any split, strings and escapes included) and keeps the
 * deepest nesting of arrays and objects seen; linear, with no recursion.
 */
export class JsonDepth {
  deepest = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  feed(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0x0a) {
        // A line ends every value, even one left open (that line is invalid JSON, reported as such).
        this.depth = 0;
        this.inString = false;
        this.escaped = false;
      } else if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === 0x5c) this.escaped = true;
        else if (byte === 0x22) this.inString = false;
      } else if (byte === 0x22) this.inString = true;
      else if (byte === 0x5b || byte === 0x7b) {
        if (++this.depth > this.deepest) this.deepest = this.depth;
      } else if (byte === 0x5d || byte === 0x7d) this.depth = Math.max(0, this.depth - 1);
    }
  }
}

/** The deepest nesting in the file, read as a stream (a chunk per turn of the event loop). */
async function deepestNesting(file: string): Promise<number> {
  const depth = new JsonDepth();
  for await (const chunk of createReadStream(file)) depth.feed(chunk as Buffer);
  return depth.deepest;
}

export const readJson: Reader = async (sql, file, options) => {
  const path = quotedString(file);
  const deepest = await deepestNesting(file);
  if (deepest > MAX_JSON_DEPTH) {
    throw new LoadFailure(
      `The file nests arrays and objects ${deepest} levels deep: at most ${MAX_JSON_DEPTH} are loaded (as BigQuery allows for JSON)`,
    );
  }
  await readLines(sql, file);
  // Keys are matched to columns without regard to case, as every other format's names are.
  const known = options.fields?.map((field) => quotedString(field.name.toLowerCase())).join(', ');
  const line = await rowNumber(sql, 'lines');
  // One row per problem: the line, the key (if any), why.
  const problems = `
    SELECT line AS row_no, NULL AS key, 'the line cannot be read (a control character, or longer than ${MAX_LINE_BYTES} bytes)' AS reason
      FROM reject_errors
    UNION ALL
    SELECT ${line}, NULL, CASE WHEN NOT json_valid(line) THEN 'invalid JSON' ELSE 'not a JSON object (one object per line)' END
      FROM lines WHERE trim(line) <> '' AND (NOT json_valid(line) OR json_type(CAST(line AS JSON)) <> 'OBJECT')
    UNION ALL
    SELECT ${line}, NULL, 'two keys name one column (they differ only in case)'
      FROM lines WHERE json_valid(line) AND json_type(CAST(line AS JSON)) = 'OBJECT'
       AND len(list_distinct(list_transform(json_keys(line), k -> lower(k)))) < len(list_distinct(json_keys(line)))
    ${
      known === undefined
        ? ''
        : `UNION ALL
    SELECT row_no, key, 'the table has no column of this name' FROM (
      SELECT ${line} AS row_no, unnest(list_filter(json_keys(line), k -> NOT list_contains([${known}], lower(k)))) AS key
        FROM lines WHERE json_valid(line) AND json_type(CAST(line AS JSON)) = 'OBJECT')`
    }`;
  const [{ count }] = (await rowsOf(sql, `SELECT count(*)::INTEGER AS count FROM (${problems})`)) as [{ count: number }];
  if (count > 0) {
    const first = await rowsOf(sql, `SELECT * FROM (${problems}) ORDER BY row_no, key LIMIT 10`);
    throw problemsFailure(
      first.map((row) => ({ row: Number(row.row_no), column: (row.key as string | null) ?? null, reason: String(row.reason) })),
      count,
      'lines that are not JSON objects of the table’s columns',
    );
  }
  const { fields, keys } = options.fields
    ? { fields: options.fields, keys: await spellingsOf(sql, options.fields) }
    : await inferredFields(sql, path);
  await stageObjects(sql, 'lines', fields, keys);
  return { fields, declaredModes: false };
};

/**
 * Per field, the keys of the file's objects that name it (in any case; a line has one at most,
 * checked above). Keys are folded by DuckDB's lower(), as the checks above fold them: JavaScript's
 * folds `İD` to `i̇d`, so a key DuckDB took for `id` filled no column.
 */
async function spellingsOf(sql: Parameters<Reader>[0], fields: Field[]): Promise<string[][]> {
  const rows = await rowsOf(
    sql,
    `SELECT key, lower(key) AS folded FROM (
       SELECT DISTINCT unnest(json_keys(line)) AS key FROM lines WHERE json_valid(line) AND json_type(CAST(line AS JSON)) = 'OBJECT')`,
  );
  // Column names are ASCII letters, digits and underscores: both languages fold them alike.
  const spellings = new Map(fields.map((field) => [field.name.toLowerCase(), [] as string[]]));
  for (const { key, folded } of rows) spellings.get(String(folded))?.push(String(key));
  // A key no line has: its own name, whose value is null in every line.
  return fields.map((field) => {
    const found = spellings.get(field.name.toLowerCase())!;
    return found.length > 0 ? found : [field.name];
  });
}

/** The columns DuckDB's JSON reader finds over every line (types widened to fit all values), and the key of each. */
async function inferredFields(sql: Parameters<Reader>[0], path: string): Promise<{ fields: Field[]; keys: string[][] }> {
  let columns;
  try {
    columns = await describe(
      sql,
      // map_inference_threshold: above 200 keys DuckDB would make the objects one MAP column
      // named `json`, which holds none of their values once staged by key.
      `read_json(${path}, format = 'newline_delimited', sample_size = -1, maximum_object_size = ${MAX_LINE_BYTES},
         map_inference_threshold = -1)`,
    );
  } catch (error) {
    throw unreadable('newline-delimited JSON', error);
  }
  const names = columnNames(columns.map((column) => column.name));
  return {
    fields: columns.map((column, i) => inferredField(names[i]!, column.type)),
    keys: columns.map((column) => [column.name]),
  };
}

/**
 * `staged` from the JSON objects in `relation`'s `line` column (blank lines skipped, line numbers
 * kept): each field's value (under whichever of the keys `keys` gives for it the line has) as
 * text, taken out in one pass.
 */
export async function stageObjects(
  sql: Parameters<Reader>[0],
  relation: string,
  fields: Field[],
  keys: string[][],
): Promise<void> {
  const paths = keys.flat().map((key) => quotedString(`$.${JSON.stringify(key)}`));
  let next = 1;
  const columns = fields.map((field, i) => {
    const values = keys[i]!.map(() => `v[${next++}]`);
    return `${values.length === 1 ? values[0] : `coalesce(${values.join(', ')})`} AS ${stagedColumn(field)}`;
  });
  await sql(`CREATE TEMP TABLE staged AS SELECT row_no, ${columns.join(', ')} FROM (
      SELECT ${await rowNumber(sql, relation)} AS row_no, json_extract_string(line, [${paths.join(', ')}]) AS v FROM ${relation} WHERE trim(line) <> '')`);
}
