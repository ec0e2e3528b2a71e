/**
 * The rules a loaded value must follow, as DuckDB SQL over the file's values as text (every
 * reader stages a file as text columns, so one set of rules serves every format; a fast CSV load
 * checks them as it reads, see checkedValue), and the columns autodetect infers. Pure: SQL text
 * in, SQL text out.
 */
import { quotedIdentifier } from '@duckdb/node-api';
import type { Field, FieldType } from '../schema.js';

const TRUE_WORDS = ['true', 't', 'yes', 'y', '1'];
const FALSE_WORDS = ['false', 'f', 'no', 'n', '0'];
const BASE64 = '([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?';
const INTEGER = '[+-]?[0-9]+';
const DECIMAL = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';
// A decimal NUMERIC holds exactly: at most 9 digits after the point (trailing zeros aside), no exponent.
const NUMERIC_EXACT = '[+-]?([0-9]+([.][0-9]{0,9}0*)?|[.][0-9]{1,9}0*)';

const words = (list: string[]) => list.map((word) => `'${word}'`).join(', ');

/**
 * SQL: the text `v` (not null) as a value of `type`, or NULL where it is none: the rule of each
 * type, one expression that checks and converts, for a single pass over the values.
 */
function parsed(type: FieldType, v: string): string {
  const t = `trim(${v})`;
  switch (type) {
    case 'STRING':
      return v;
    case 'INT64':
      // TRY_CAST alone would round 1.5 to 2.
      return `(CASE WHEN regexp_full_match(${t}, '${INTEGER}') THEN TRY_CAST(${t} AS BIGINT) END)`;
    case 'FLOAT64':
      return `TRY_CAST(${t} AS DOUBLE)`;
    case 'NUMERIC':
      // TRY_CAST alone rounds 1.1234567891 to 9 digits; the warehouse refuses such a value (Invalid NUMERIC value).
      // With an exponent, it is exact when a cast with 9 more digits after the point says the same.
      return `(CASE WHEN regexp_full_match(${t}, '${NUMERIC_EXACT}') THEN TRY_CAST(${t} AS DECIMAL(38, 9))
        WHEN regexp_full_match(${t}, '${DECIMAL}') AND TRY_CAST(${t} AS DECIMAL(38, 18)) = TRY_CAST(${t} AS DECIMAL(38, 9))
        THEN TRY_CAST(${t} AS DECIMAL(38, 9)) END)`;
    case 'BOOL':
      return `(CASE WHEN lower(${t}) IN (${words(TRUE_WORDS)}) THEN true WHEN lower(${t}) IN (${words(FALSE_WORDS)}) THEN false END)`;
    case 'DATE':
      return `TRY_CAST(${t} AS DATE)`;
    case 'DATETIME':
      return `TRY_CAST(${t} AS TIMESTAMP)`;
    case 'TIMESTAMP':
      return `TRY_CAST(${t} AS TIMESTAMPTZ)`;
    case 'TIME':
      return `TRY_CAST(${t} AS TIME)`;
    case 'BYTES':
      return `(CASE WHEN regexp_full_match(${t}, '${BASE64}') THEN from_base64(${t}) END)`;
    case 'JSON':
      return `(CASE WHEN json_valid(${v}) THEN CAST(${v} AS JSON) END)`;
  }
}

/** SQL: whether the text `v` (not null) is a value of `type`. */
export function fits(type: FieldType, v: string): string {
  return type === 'STRING' ? 'true' : `(${parsed(type, v)} IS NOT NULL)`;
}

/** SQL: the text `v` as a value of `type` (text that fits; NULL stays NULL). */
export function converted(type: FieldType, v: string): string {
  const t = `trim(${v})`;
  switch (type) {
    case 'STRING':
      return v;
    case 'INT64':
      return `CAST(${t} AS BIGINT)`;
    case 'FLOAT64':
      return `CAST(${t} AS DOUBLE)`;
    case 'NUMERIC':
      return `CAST(${t} AS DECIMAL(38, 9))`;
    case 'BOOL':
      return `(lower(${t}) IN (${words(TRUE_WORDS)}))`;
    case 'DATE':
      return `CAST(${t} AS DATE)`;
    case 'DATETIME':
      return `CAST(${t} AS TIMESTAMP)`;
    case 'TIMESTAMP':
      return `CAST(${t} AS TIMESTAMPTZ)`;
    case 'TIME':
      return `CAST(${t} AS TIME)`;
    case 'BYTES':
      return `from_base64(${t})`;
    case 'JSON':
      return `CAST(${v} AS JSON)`;
  }
}

// A REPEATED column's text is a JSON array; its elements are checked and converted one by one.
const elements = (v: string) => `CAST(CAST(${v} AS JSON) AS VARCHAR[])`;
const isArray = (v: string) => `(json_valid(${v}) AND json_type(CAST(${v} AS JSON)) = 'ARRAY')`;

/** SQL: whether the column's text `v` (possibly NULL) is acceptable for `field`. */
export function acceptable(field: Field, v: string): string {
  switch (field.mode) {
    case 'REPEATED':
      return `(${v} IS NULL OR (${isArray(v)} AND len(list_filter(${elements(v)}, x -> x IS NULL OR NOT ${fits(field.type, 'x')})) = 0))`;
    case 'REQUIRED':
      return `(${v} IS NOT NULL AND ${fits(field.type, v)})`;
    case 'NULLABLE':
      return `(${v} IS NULL OR ${fits(field.type, v)})`;
  }
}

/** SQL: the column's text `v` as the column's value; a REPEATED column without one is empty. */
export function columnValue(field: Field, v: string): string {
  if (field.mode === 'REPEATED') return `COALESCE(list_transform(${elements(v)}, x -> ${converted(field.type, 'x')}), [])`;
  return converted(field.type, v);
}

/** SQL: why the text `v` is not acceptable for `field` (for values `acceptable` refused). */
export function refusal(field: Field, v: string): string {
  const expected = field.mode === 'REPEATED' ? `a JSON array of ${field.type} values` : `a ${field.type} value`;
  const shown = `CASE WHEN length(${v}) > 40 THEN left(${v}, 40) || '…' ELSE ${v} END`;
  return `CASE WHEN ${v} IS NULL THEN 'REQUIRED column has no value' ELSE 'expected ${expected}, got "' || ${shown} || '"' END`;
}

/**
 * The types DuckDB's CSV reader may read typed, for a fast load: it reads a value of these as
 * `converted` does, and takes no text that `fits` refuses (it refuses some that `fits` takes,
 * such as a BOOL with spaces around it, which then go the staged way). Not so for the others:
 * it reads `1.5` as the INT64 2, `1_000` as a NUMERIC, text it cannot read as a null TIMESTAMP.
 */
const CSV_TYPES: Partial<Record<FieldType, string>> = {
  STRING: 'VARCHAR',
  FLOAT64: 'DOUBLE',
  BOOL: 'BOOLEAN',
  DATE: 'DATE',
  DATETIME: 'TIMESTAMP',
  TIME: 'TIME',
};

/** The type DuckDB's CSV reader reads the field's column as for a fast load; undefined: as text. */
export function csvType(field: Field): string | undefined {
  return field.mode === 'REPEATED' ? undefined : CSV_TYPES[field.type];
}

/**
 * SQL: the column `v`'s value for `field` (read as csvType's type when `typed`, else as text),
 * failing the statement where the value is not acceptable.
 */
export function checkedValue(field: Field, v: string, typed: boolean): string {
  const refused = `error('a value does not fit its column')`;
  if (field.mode === 'REPEATED') return `CASE WHEN ${acceptable(field, v)} THEN ${columnValue(field, v)} ELSE ${refused} END`;
  if (typed && field.mode === 'NULLABLE') return v;
  const missing = field.mode === 'REQUIRED' ? refused : 'NULL';
  return `CASE WHEN ${v} IS NULL THEN ${missing} ELSE ${typed ? v : `coalesce(${parsed(field.type, v)}, ${refused})`} END`;
}

/**
 * The column type of a value DuckDB inferred (`BIGINT`, `VARCHAR[]`, `STRUCT(a INTEGER)`, ...):
 * lists are REPEATED columns of their element type; nested values (structs, maps, lists of
 * lists) are JSON. Modes other than REPEATED are decided from the values (see inferredModes).
 */
export function inferredField(name: string, duckDbType: string): Field {
  const list = /^(.*)\[\]$/.exec(duckDbType);
  const element = list?.[1];
  if (element !== undefined && !element.endsWith(']')) {
    return { name, type: scalarType(element), mode: 'REPEATED', private: false };
  }
  return { name, type: element === undefined ? scalarType(duckDbType) : 'JSON', mode: 'NULLABLE', private: false };
}

function scalarType(duckDbType: string): FieldType {
  const type = duckDbType.toUpperCase();
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(type)) return 'INT64';
  if (type === 'DOUBLE' || type === 'FLOAT') return 'FLOAT64';
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(type);
  if (decimal) return decimalColumnType(Number(decimal[1]), Number(decimal[2]));
  if (type === 'BOOLEAN') return 'BOOL';
  if (type === 'DATE') return 'DATE';
  if (type === 'TIME' || type === 'TIME WITH TIME ZONE') return 'TIME';
  if (type === 'TIMESTAMP WITH TIME ZONE') return 'TIMESTAMP';
  if (type.startsWith('TIMESTAMP')) return 'DATETIME';
  if (type === 'BLOB') return 'BYTES';
  if (type === 'VARCHAR' || type === 'UUID') return 'STRING';
  return 'JSON';
}

/**
 * The column for decimals of `precision` digits, `scale` after the point: NUMERIC where it holds
 * them all (29 digits before the point, 9 after), otherwise STRING, their exact text (there is no
 * BIGNUMERIC column; NUMERIC would refuse every value with more digits after the point).
 */
export function decimalColumnType(precision: number, scale: number): FieldType {
  return scale <= 9 && precision - scale <= 29 ? 'NUMERIC' : 'STRING';
}

/**
 * Modes from the values: a column with a value in every row (of at least one) is REQUIRED,
 * otherwise NULLABLE; REPEATED stays.
 */
export function inferredModes(fields: Field[], nullCounts: number[], rows: number): Field[] {
  return fields.map((field, index) =>
    field.mode === 'REPEATED' ? field : { ...field, mode: rows > 0 && nullCounts[index] === 0 ? 'REQUIRED' : 'NULLABLE' },
  );
}

/**
 * Inferred columns for a table that keeps its rows: a column it has as NULLABLE stays so (its
 * rows may lack values), whatever the new file holds.
 */
export function keepingNullable(inferred: Field[], current: Field[]): Field[] {
  const nullable = new Set(current.filter((field) => field.mode === 'NULLABLE').map((field) => field.name));
  return inferred.map((field) =>
    field.mode === 'REQUIRED' && nullable.has(field.name) ? { ...field, mode: 'NULLABLE' } : field,
  );
}

const RESERVED_PREFIXES = ['_TABLE_', '_FILE_', '_PARTITION', '_ROW_TIMESTAMP', '__ROOT__', '_COLIDENTIFIER'];

/**
 * Column names for a file's headings: letters, digits and underscores only, not starting with a
 * digit or a prefix the warehouse reserves, unique without regard to case (`name`, `name_2`).
 */
export function columnNames(headings: string[]): string[] {
  const taken = new Set<string>();
  // The next suffix to try for a name, so that 10,000 headings of one name cost linear time, not quadratic.
  const nextSuffix = new Map<string, number>();
  return headings.map((heading, index) => {
    let name =
      heading
        .trim()
        .replace(/[^A-Za-z0-9_]+/g, '_')
        .slice(0, 280) || `column_${index + 1}`;
    if (/^[0-9]/.test(name) || RESERVED_PREFIXES.some((prefix) => name.toUpperCase().startsWith(prefix))) name = `c_${name}`;
    let unique = name;
    const key = name.toLowerCase();
    if (taken.has(key)) {
      let n = nextSuffix.get(key) ?? 2;
      while (taken.has(`${key}_${n}`)) n++;
      unique = `${name}_${n}`;
      nextSuffix.set(key, n + 1);
    }
    taken.add(unique.toLowerCase());
    return unique;
  });
}

/** The staging column of a field: `"name"`. */
export function stagedColumn(field: Pick<Field, 'name'>): string {
  return quotedIdentifier(field.name);
}
