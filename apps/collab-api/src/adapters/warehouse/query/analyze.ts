/**
 * The SQL guard of query jobs, as pure functions over DuckDB's own parse tree (the JSON of
 * `json_serialize_sql`): the text is parsed by DuckDB, so quoting, comments and spelling make no
 * difference. A statement passes only when it is one SELECT (CTEs, recursive ones included,
 * joins, subqueries, set operations, VALUES, PIVOT and UNPIVOT) whose every table is a readable
 * `dataset_name.table_name` or a CTE in scope, whose table functions are the allowed ones
 * (`range`, `generate_series`, `unnest`) and whose every function is on the reviewed allowlist
 * (functions.ts). Its tables are rewritten to their physical names, and the statement that runs
 * is the one DuckDB prints back from the checked tree, never the caller's text.
 *
 * Which result columns are private is not decided here: lineage.ts follows DuckDB's bound plan of
 * the printed statement, where every way of naming a column is already resolved.
 */
import type { TableRef } from '../interface.js';
import type { FieldType } from '../schema.js';
import { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS } from './functions.js';
import { QueryFailure } from './interface.js';
import type { AggregationRule } from './rules.js';

/** A table the job may read, by the name the query gives it. */
export interface ReadableTable {
  ref: TableRef;
  /** `dataset_name.table_name`, as their owner spells them. */
  name?: string;
  /** `masked`: another tenant's private column, join-only for the caller (rules.ts). */
  columns: { name: string; type: FieldType; repeated: boolean; masked: boolean }[];
  /** A table of another tenant (absent for the caller's own): its owner, and the rules the owner set. */
  shared?: { tenantId: string; aggregation: AggregationRule | null; allowExports: boolean };
}

/**
 * Readable tables by `dataset_name.table_name`, lower-cased; null for a name that two readable
 * datasets share (a dataset shared by another tenant may carry the name of one of the project's).
 */
export type ReadableCatalog = Map<string, ReadableTable | null>;

export function catalogKey(datasetName: string, tableName: string): string {
  return `${datasetName}.${tableName}`.toLowerCase();
}

/** Why a statement may not run; its message is for the caller. */
export class QueryRefused extends Error {
  override name = 'QueryRefused';
}

export interface GuardedQuery {
  /** The checked statement with physical table names, for `json_deserialize_sql`. */
  tree: unknown;
  /** Catalog keys of the tables the statement reads. */
  tables: Set<string>;
  /** The table references the caller gave no alias (their alias is now the caller's table name). */
  unaliased: Set<unknown>;
}

type Node = Record<string, unknown>;

/** The parse result of `json_serialize_sql`: one SELECT; QueryRefused, or a QueryFailure `invalidQuery` for a text that does not parse. */
export function singleStatement(serialized: string): Node {
  const parsed = parseTree(serialized) as {
    error: boolean;
    error_message?: string;
    statements?: { node: Node }[];
  };
  if (parsed.error) {
    const message = parsed.error_message ?? 'the query could not be parsed';
    if (/only select statements/i.test(message)) {
      throw new QueryRefused(
        'Only a SELECT may run: statements that write, attach, copy, load, install or change settings are refused',
      );
    }
    throw new QueryFailure('invalidQuery', `The query could not be parsed: ${message}`);
  }
  const statements = parsed.statements ?? [];
  if (statements.length !== 1)
    throw new QueryRefused(`A query is exactly one SELECT statement; this text has ${statements.length}`);
  return statements[0]!.node;
}

/**
 * DuckDB's JSON of a parse tree, read so that JSON.stringify writes it back as it was: a number
 * that JavaScript would write otherwise (a DOUBLE's `1000.0`, which would come back an integer
 * and no longer bind as DOUBLE; an integer past 2^53; DuckDB's "no location" marker) is kept as
 * DuckDB wrote it (JSON.rawJSON; constantText reads it). A constant past DOUBLE's range, which
 * DuckDB writes as the non-JSON `Infinity`, fails the query (`invalidQuery`).
 */
export function parseTree(serialized: string): unknown {
  try {
    return JSON.parse(serialized, keepNumberText);
  } catch (error) {
    if (error instanceof SyntaxError && /\b(-?Infinity|NaN)\b/.test(serialized)) {
      throw new QueryFailure(
        'invalidQuery',
        "The query holds a number beyond DOUBLE's range (such as 1e400), which DuckDB reads as infinity: write it " +
          "within range, or as CAST('Infinity' AS DOUBLE)",
      );
    }
    throw error;
  }
}

// JSON.rawJSON, JSON.isRawJSON and the reviver's source text (ES2025, Node 24), which TypeScript's lib does not declare yet.
const json = JSON as unknown as { rawJSON: (text: string) => object; isRawJSON: (value: unknown) => boolean };

function keepNumberText(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && context?.source !== undefined && context.source !== JSON.stringify(value)) {
    return json.rawJSON(context.source);
  }
  return value;
}

/** A value of a parse tree as parseTree reads it (a number kept as its text included) as text. */
export function constantText(value: unknown): string {
  return json.isRawJSON(value) ? (value as { rawJSON: string }).rawJSON : String(value);
}

/**
 * Table columns a statement's plan may scan, at most: the sandbox plans it on stand-ins, and the
 * plan carries every column of each table it scans (a CTE's scans again for each reference to it),
 * so this bounds the plan's size (some 100 bytes a column) and the work of following it.
 */
export const MAX_SCANNED_COLUMNS = 250_000;

const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE']);
/**
 * Catalog keys of every readable table the parse tree names (`dataset_name.table_name` anywhere:
 * in CTEs, subqueries, joins), each once, whatever else the statement holds: the tables a query
 * refused or failed while it was checked would have read.
 */
export function namedTables(node: unknown, catalog: ReadableCatalog): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== 'object') return;
    const n = value as Node;
    if (n.type === 'BASE_TABLE' && typeof n.schema_name === 'string' && n.schema_name !== '') {
      const key = catalogKey(n.schema_name, String(n.table_name));
      if (catalog.get(key)) found.add(key);
    }
    Object.values(n).forEach(walk);
  };
  walk(node);
  return [...found];
}

const TABLE_REFS = new Set(['BASE_TABLE', 'JOIN', 'SUBQUERY', 'EXPRESSION_LIST', 'TABLE_FUNCTION', 'PIVOT', 'EMPTY']);

/**
 * Checks the statement against the catalog and rewrites its tables to physical names (in `node`
 * itself). The walk visits every part of the tree: query nodes and table references by their
 * shape (for the CTEs in scope), everything else property by property, so a clause this code
 * does not name is still checked.
 */
export function analyzeQuery(
  node: Node,
  catalog: ReadableCatalog,
  physical: (ref: TableRef) => { dataset: string; table: string },
): GuardedQuery {
  const tables = new Set<string>();
  const unaliased = new Set<unknown>();
  let scanned = 0;

  // CTEs in scope, with the columns each one's scans count for every reference to it.
  type Ctes = ReadonlyMap<string, number>;

  const any = (value: unknown, ctes: Ctes): void => {
    if (Array.isArray(value)) {
      for (const item of value) any(item, ctes);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const n = value as Node;
    if (typeof n.class === 'string') {
      if (n.class === 'FUNCTION') checkFunction(n);
      if (n.class === 'WINDOW') checkFunction({ function_name: n.function_name, schema: n.schema, catalog: n.catalog });
    } else if (QUERY_NODES.has(String(n.type))) {
      return queryNode(n, ctes);
    } else if (TABLE_REFS.has(String(n.type))) {
      return tableRef(n, ctes);
    }
    for (const child of Object.values(n)) any(child, ctes);
  };

  const queryNode = (n: Node, outer: Ctes): void => {
    // A CTE sees the CTEs before it (a recursive one also itself); the query sees them all.
    const scope = new Map(outer);
    const entries = ((n.cte_map as { map?: { key: string; value: Node }[] } | undefined)?.map ?? []) as {
      key: string;
      value: Node;
    }[];
    for (const entry of entries) {
      const before = scanned;
      any(entry.value, scope);
      scope.set(entry.key.toLowerCase(), scanned - before);
    }
    // A recursive CTE's reference to itself is one scan of its working table.
    const inner = n.type === 'RECURSIVE_CTE_NODE' ? new Map(scope).set(text(n.cte_name).toLowerCase(), 0) : scope;
    for (const [key, child] of Object.entries(n)) if (key !== 'cte_map') any(child, inner);
  };

  const tableRef = (ref: Node, ctes: Ctes): void => {
    switch (ref.type) {
      case 'BASE_TABLE':
        baseTable(ref, ctes);
        any(ref.sample, ctes);
        return;
      case 'TABLE_FUNCTION': {
        const fn = (ref.function ?? {}) as Node;
        const name = text(fn.function_name).toLowerCase();
        if (fn.schema || fn.catalog || !ALLOWED_TABLE_FUNCTIONS.has(name)) {
          throw new QueryRefused(
            `Table functions other than ${[...ALLOWED_TABLE_FUNCTIONS].join(', ')} are not allowed (${name}): a query reads the tables of its project's datasets only`,
          );
        }
        // Its arguments are expressions like any other.
        for (const [key, child] of Object.entries(fn)) if (key !== 'function_name') any(child, ctes);
        for (const [key, child] of Object.entries(ref)) if (key !== 'function') any(child, ctes);
        return;
      }
      case 'JOIN':
      case 'SUBQUERY':
      case 'EXPRESSION_LIST':
      case 'PIVOT':
      case 'EMPTY':
        for (const child of Object.values(ref)) any(child, ctes);
        return;
      default:
        throw new QueryRefused(`This kind of table reference is not supported (${String(ref.type)})`);
    }
  };

  const baseTable = (ref: Node, ctes: Ctes): void => {
    const schema = text(ref.schema_name);
    const name = String(ref.table_name);
    if (ref.catalog_name) {
      throw new QueryRefused(
        `Tables are named dataset_name.table_name; "${text(ref.catalog_name)}.${schema}.${name}" is not readable`,
      );
    }
    if (ref.at_clause) throw new QueryRefused('AT (time travel) clauses are not supported');
    if (schema === '') {
      const cte = ctes.get(name.toLowerCase());
      if (cte === undefined) {
        throw new QueryRefused(
          `Unknown table "${name}": name tables as dataset_name.table_name, of the datasets this query's project may read`,
        );
      }
      scanned += cte;
      return;
    }
    const key = catalogKey(schema, name);
    const table = catalog.get(key);
    if (table === null) {
      throw new QueryRefused(`"${schema}.${name}" is ambiguous: two datasets this project reads are named "${schema}"`);
    }
    if (!table) {
      throw new QueryRefused(`Table "${schema}.${name}" is not one this query's project may read (or does not exist)`);
    }
    const names = physical(table.ref);
    ref.schema_name = names.dataset;
    ref.table_name = names.table;
    // Columns qualified with the table's own name keep working under the physical name.
    if (!ref.alias) {
      ref.alias = name;
      unaliased.add(ref);
    }
    tables.add(key);
    scanned += table.columns.length;
  };

  any(node, new Map());
  if (scanned > MAX_SCANNED_COLUMNS) {
    throw new QueryRefused(
      `The query is too large to check: it scans ${scanned} table columns, counting every column of each table it reads (once more for each reference to a CTE that reads it); at most ${MAX_SCANNED_COLUMNS}`,
    );
  }
  const datasets = new Set([...catalog.values()].flatMap((table) => (table ? [physical(table.ref).dataset] : [])));
  sweep(node, datasets);
  return { tree: node, tables, unaliased };
}

/**
 * A last look at the whole rewritten tree, whatever path led there: no table function but the
 * allowed ones, and every table is a rewritten readable one or a CTE name (unqualified, which the
 * walk above checked).
 */
function sweep(value: unknown, datasets: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) sweep(item, datasets);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const n = value as Node;
  if (n.type === 'TABLE_FUNCTION') {
    const fn = (n.function ?? {}) as Node;
    if (!ALLOWED_TABLE_FUNCTIONS.has(text(fn.function_name).toLowerCase()))
      throw new QueryRefused('Table functions are not allowed');
  }
  if (n.type === 'BASE_TABLE' && (n.catalog_name || (n.schema_name !== '' && !datasets.has(String(n.schema_name))))) {
    throw new QueryRefused('The query names a table that is not readable');
  }
  for (const child of Object.values(n)) sweep(child, datasets);
}

/**
 * A function is called by its name alone (or as DuckDB's own syntax writes it: `main.list_value`
 * for `[1, 2]`), and must be on the allowlist.
 */
function checkFunction(n: Node): void {
  const name = text(n.function_name).toLowerCase();
  const schema = text(n.schema).toLowerCase();
  const catalog = text(n.catalog).toLowerCase();
  if ((schema !== '' && schema !== 'main') || (catalog !== '' && catalog !== 'system')) {
    throw new QueryRefused(`Functions are called by their names alone; "${schema}.${name}" is refused`);
  }
  if (!ALLOWED_FUNCTIONS.has(name)) {
    throw new QueryRefused(`The function ${name} is not allowed in queries (or does not exist)`);
  }
}

/** A name from the tree: a string, or '' for anything else. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
