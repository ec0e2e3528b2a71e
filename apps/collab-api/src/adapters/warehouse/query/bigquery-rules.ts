/**
 * The pure part of query jobs on BigQuery (query/bigquery.ts): what a dry run must show for a job
 * to run, which result columns are private, the SQL that stores a result with them nulled, the
 * job's statistics as the API lists them, and BigQuery's `{f: [{v}]}` rows as JSON values.
 */
import type { TableRef } from '../interface.js';
import type { ExportCompression, ExportFormat, ResultColumn } from './interface.js';
import { QueryFailure } from './interface.js';
import type { ReadableCatalog } from './analyze.js';

/** A field of a BigQuery schema (TableFieldSchema). */
export interface BigQueryField {
  name: string;
  type: string;
  mode?: string;
  fields?: BigQueryField[];
}

export interface BigQueryTableReference {
  projectId: string;
  datasetId: string;
  tableId: string;
}

/** What a dry run reports that the check reads (JobStatistics2). */
export interface DryRunStatistics {
  statementType?: string;
  totalBytesProcessed?: string;
  referencedTables?: BigQueryTableReference[];
  schema?: { fields?: BigQueryField[] };
}

type Physical = (ref: TableRef) => { project: string; dataset: string; table: string };

/** The readable tables by their physical `project.dataset.table`. */
function byPhysicalName(catalog: ReadableCatalog, physical: Physical) {
  const tables = new Map<string, { key: string; masked: boolean; ruled: boolean }>();
  for (const [key, table] of catalog) {
    if (!table) continue;
    const names = physical(table.ref);
    const masked = table.columns.some((column) => column.masked);
    tables.set(`${names.project}.${names.dataset}.${names.table}`, {
      key,
      masked,
      ruled: masked || Boolean(table.shared?.aggregation),
    });
  }
  return tables;
}

/**
 * Refuses (QueryFailure 'accessDenied') what the dry run shows is not one SELECT reading readable
 * tables: another statement type, a script, or any referenced table outside the catalog (the
 * results dataset, other tenants' datasets, views over them). Answers whether a referenced table
 * has masked columns (the conservative privacy rule's input), and whether one has analysis rules
 * (masked columns or an aggregation rule), which the caller must have checked.
 */
export function checkDryRun(
  statistics: DryRunStatistics,
  catalog: ReadableCatalog,
  physical: Physical,
): { readsMasked: boolean; readsRuled: boolean } {
  const type = statistics.statementType ?? 'unknown';
  if (type !== 'SELECT') {
    throw new QueryFailure(
      'accessDenied',
      type === 'SCRIPT'
        ? 'A query is exactly one SELECT statement: scripts and several statements are refused'
        : `Only a SELECT may run: this is a ${type.replaceAll('_', ' ')} statement`,
    );
  }
  const readable = byPhysicalName(catalog, physical);
  let readsMasked = false;
  let readsRuled = false;
  for (const reference of statistics.referencedTables ?? []) {
    const table = readable.get(`${reference.projectId}.${reference.datasetId}.${reference.tableId}`);
    if (!table) {
      throw new QueryFailure(
        'accessDenied',
        "The query reads a table outside the datasets this query's project may read (a view or a stored result counts too)",
      );
    }
    readsMasked ||= table.masked;
    readsRuled ||= table.ruled;
  }
  return { readsMasked, readsRuled };
}

/**
 * Which result columns are private. DuckDB's lineage (sandbox.ts over DuckDB's plan of the same
 * text) decides, when DuckDB could bind the text and its columns line up with BigQuery's (same
 * count, and the same names where BigQuery names a column: not its anonymous `f0_`); otherwise
 * every column is private once a referenced table has a masked column.
 */
export function privateColumns(
  fields: BigQueryField[],
  lineage: { masked: boolean[]; names: string[] } | undefined,
  readsMasked: boolean,
): boolean[] {
  const fits =
    lineage !== undefined &&
    lineage.masked.length === fields.length &&
    lineage.names.length === fields.length &&
    fields.every((field, i) => /^f\d+_$/.test(field.name) || field.name.toLowerCase() === lineage.names[i]!.toLowerCase());
  return fits ? lineage.masked : fields.map(() => readsMasked);
}

const LEGACY_TYPES: Record<string, string> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL', RECORD: 'STRUCT' };

/** A field's GoogleSQL type, as CAST takes it: `INT64`, `ARRAY<STRING>`, ``STRUCT<`a` INT64>``. */
export function googleSqlType(field: Pick<BigQueryField, 'type' | 'mode' | 'fields'>): string {
  const type = LEGACY_TYPES[field.type] ?? field.type;
  const base =
    type === 'STRUCT'
      ? `STRUCT<${(field.fields ?? []).map((inner) => `${quotedField(inner.name)} ${googleSqlType(inner)}`).join(', ')}>`
      : type;
  return field.mode === 'REPEATED' ? `ARRAY<${base}>` : base;
}

/** A name as GoogleSQL quotes it: in backticks, with `\\` and `` ` `` escaped. */
export function quotedField(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

/** The stored result's flag of rows in which a nulled column held a value (dropped once counted). */
export const MASKED_ROW = '_collab_masked_row';

/**
 * The statement that stores a result whose `private` columns are nulled, with MASKED_ROW last:
 * whether a nulled column held a value in that row (DuckDB's store() does the same). The caller's
 * columns are taken by position (their names may be BigQuery's anonymous `f0_`, which no outer
 * query can name): the first, empty, branch of a UNION ALL names them `c0, c1, ...` and fixes their
 * types, and the outer SELECT gives them their names back.
 */
export function maskingSql(sql: string, columns: ResultColumn[]): string {
  const positional = columns.map((column, i) => `CAST(NULL AS ${column.type}) AS c${i}`).join(', ');
  const projections = columns.map((column, i) =>
    column.private ? `CAST(NULL AS ${column.type}) AS ${quotedField(column.name)}` : `c${i} AS ${quotedField(column.name)}`,
  );
  const maskedValues = columns.flatMap((column, i) => (column.private ? [`c${i} IS NOT NULL`] : []));
  return `SELECT ${projections.join(', ')}, (${maskedValues.join(' OR ')}) AS ${MASKED_ROW}
FROM ((SELECT ${positional} LIMIT 0) UNION ALL (
${sql}
))`;
}

/** The statistics objects of the query job's answer, by the names the API lists them under (null where absent). */
export function jobStatistics(statistics: Record<string, unknown> | undefined): Record<string, unknown> {
  const query = (statistics?.query ?? {}) as Record<string, unknown>;
  return {
    query_plan: query.queryPlan ?? null,
    timeline: query.timeline ?? null,
    dml_stats: query.dmlStats ?? null,
    reservation_usage: statistics?.reservationUsage ?? null,
    session_info: statistics?.sessionInfo ?? null,
    transaction_info: statistics?.transactionInfo ?? null,
    script_statistics: statistics?.scriptStatistics ?? null,
  };
}

type ParsedType =
  | { kind: 'scalar'; name: string }
  | { kind: 'array'; of: ParsedType }
  | { kind: 'struct'; fields: { name: string; type: ParsedType }[] };

/** Reads back a type googleSqlType wrote. */
export function parseType(text: string): ParsedType {
  let i = 0;
  const skip = () => {
    while (text[i] === ' ') i += 1;
  };
  const type = (): ParsedType => {
    skip();
    const name = /^[A-Z0-9_]+/i.exec(text.slice(i))![0].toUpperCase();
    i += name.length;
    // Parameterized scalars (NUMERIC(10, 2), STRING(5)) keep their parameters out of the kind.
    if (text[i] === '(') i = text.indexOf(')', i) + 1;
    if (name !== 'ARRAY' && name !== 'STRUCT') return { kind: 'scalar', name };
    i += 1; // <
    if (name === 'ARRAY') {
      const of = type();
      i += 1; // >
      return { kind: 'array', of };
    }
    const fields: { name: string; type: ParsedType }[] = [];
    while (text[i] !== '>') {
      skip();
      let end = i + 1;
      while (text[end] !== '`') end += text[end] === '\\' ? 2 : 1;
      const field = text.slice(i + 1, end).replace(/\\(.)/g, '$1');
      i = end + 1;
      fields.push({ name: field, type: type() });
      skip();
      if (text[i] === ',') i += 1;
    }
    i += 1;
    return { kind: 'struct', fields };
  };
  return type();
}

type Cell = { v: unknown } | undefined;

/**
 * A value of tabledata.list (`formatOptions.useInt64Timestamp`) as the API answers it: INT64 a
 * number when it is exactly one (else its digits), FLOAT64 a number, BOOL a boolean, TIMESTAMP an
 * ISO string, arrays and structs as JSON arrays and objects, everything else BigQuery's text.
 */
export function jsonValue(value: unknown, type: ParsedType): unknown {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'array':
      return (value as Cell[]).map((cell) => jsonValue(cell?.v, type.of));
    case 'struct': {
      const cells = (value as { f: Cell[] }).f;
      return Object.fromEntries(type.fields.map((field, i) => [field.name, jsonValue(cells[i]?.v, field.type)]));
    }
    case 'scalar':
      // Scalars come as text in tabledata.list's rows.
      return scalar(value as string, type.name);
  }
}

function scalar(text: string, type: string): unknown {
  switch (type) {
    case 'INT64': {
      const number = Number(text);
      return Number.isSafeInteger(number) ? number : text;
    }
    case 'FLOAT64': {
      const number = Number(text);
      return Number.isFinite(number) ? number : text;
    }
    case 'BOOL':
      return text === 'true';
    case 'TIMESTAMP':
      return isoFromMicros(BigInt(text));
    default:
      return text;
  }
}

/** Microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function isoFromMicros(micros: bigint): string {
  const millis = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const fraction = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return new Date(Number(millis)).toISOString().replace(/\.\d{3}Z$/, `.${String(fraction).padStart(6, '0')}Z`);
}

/** BigQuery's destinationFormat and compression for an export, or why it cannot make it. */
export function extractSettings(
  format: ExportFormat,
  compression: ExportCompression,
): { destinationFormat: string; compression: string } {
  // BigQuery's extract jobs: GZIP for CSV, JSON and Parquet; DEFLATE for Avro only.
  const supported: Record<ExportFormat, ExportCompression[]> = {
    CSV: ['GZIP', 'NONE'],
    JSON: ['GZIP', 'NONE'],
    AVRO: ['DEFLATE', 'NONE'],
    PARQUET: ['GZIP', 'NONE'],
  };
  if (!supported[format].includes(compression)) {
    throw new QueryFailure(
      'unsupported',
      `BigQuery cannot export ${format} with ${compression} compression: choose ${supported[format].join(' or ')}`,
    );
  }
  return { destinationFormat: format === 'JSON' ? 'NEWLINE_DELIMITED_JSON' : format, compression };
}
