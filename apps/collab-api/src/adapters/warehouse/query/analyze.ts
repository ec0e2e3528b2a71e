/**
 * The SQL guard of query jobs, as pure functions over DuckDB's own parse tree (the JSON of
 * `json_serialize_sql`): the text is parsed by DuckDB, so quoting, comments and spelling make no
 * difference. A statement passes only when it is one SELECT (CTEs, joins, subqueries, set
 * operations, VALUES) whose every table is a readable `dataset_name.table_name` or a CTE of the
 * statement; table functions (`read_csv`, `query`, ...), other catalogs and schemas, system
 * tables and functions that read or change state are refused. Its tables are rewritten to their
 * physical names, and the statement that runs is the one DuckDB prints back from the checked tree,
 * never the caller's text.
 *
 * Along the way it works out which result columns come from masked columns (another tenant's
 * private columns: contract.md's privacy rule), and which columns of which tables it reads
 * (what the cost counts).
 */
import type { TableRef } from '../interface.js';
import type { FieldType } from '../schema.js';

/** A table the job may read, by the name the query gives it. */
export interface ReadableTable {
  ref: TableRef;
  columns: { name: string; type: FieldType; repeated: boolean; masked: boolean }[];
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

export interface AnalyzedQuery {
  /** The checked statement with physical table names, for `json_deserialize_sql`. */
  tree: unknown;
  /**
   * For each result column in order, whether it comes from a masked column; or, when the columns
   * could not be followed (a shape this analysis does not know), `mask` for all of them.
   */
  masked: boolean[];
  /** The result columns' names where the analysis knows them ('' for an expression without an alias). */
  names: string[];
  /** Whether any masked column is read at all (the fallback when `masked` does not fit the result). */
  readsMasked: boolean;
  /** Columns read, by catalog key. */
  read: Map<string, Set<string>>;
}

/** Functions that read the instance's settings or files, or change state, whatever tables they are given. */
const REFUSED_FUNCTIONS = new Set([
  'nextval',
  'currval',
  'setseed',
  'current_setting',
  // The SQL that runs, with physical names.
  'current_query',
  'write_log',
  'which_secret',
  'getvariable',
  'getenv',
  'read_text',
  'read_blob',
  'glob',
  'query',
  'query_table',
  'sql_auto_complete',
  'checkpoint',
  'force_checkpoint',
  'enable_profiling',
  'export_database',
]);
const REFUSED_FUNCTION_PREFIXES = ['duckdb_', 'pragma_', 'pg_', 'icu_', 'read_', 'parquet_', 'iceberg_', 'delta_'];

interface Column {
  name: string;
  masked: boolean;
  /** Catalog key and column name of a base table's column, for the cost. */
  source?: { key: string; column: string };
}

interface Binding {
  alias: string;
  columns: Column[];
  /** Columns a `*` leaves out (the right side's USING columns). */
  hidden: Set<string>;
}

interface Scope {
  bindings: Binding[];
  ctes: Map<string, Column[]>;
  parent?: Scope;
  /** Aliases of the select list so far (DuckDB lets later items use them). */
  aliases?: Map<string, boolean>;
}

type Node = Record<string, unknown>;

/** The parse result of `json_serialize_sql`: one SELECT, or QueryRefused. */
export function singleStatement(serialized: string): Node {
  const parsed = JSON.parse(serialized, keepLargeIntegers) as {
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
    throw new QueryRefused(`The query could not be parsed: ${message}`);
  }
  const statements = parsed.statements ?? [];
  if (statements.length !== 1)
    throw new QueryRefused(`A query is exactly one SELECT statement; this text has ${statements.length}`);
  return statements[0]!.node;
}

// JSON.rawJSON and the reviver's source text (ES2025, Node 24), which TypeScript's lib does not declare yet.
const rawJson = (text: string): unknown => (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON(text);

/**
 * Integers beyond 2^53 (DuckDB's "no location" marker, large constants) stay exactly as DuckDB
 * wrote them, so that the printed SQL means what the caller wrote.
 */
function keepLargeIntegers(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) {
    return rawJson(context.source);
  }
  return value;
}

/** Checks the statement against the catalog, rewrites its tables to physical names (in `node` itself) and follows its columns. */
export function analyzeQuery(
  node: Node,
  catalog: ReadableCatalog,
  physical: (ref: TableRef) => { dataset: string; table: string },
): AnalyzedQuery {
  const read = new Map<string, Set<string>>();
  let readsMasked = false;
  const markRead = (column: Column) => {
    if (column.masked) readsMasked = true;
    if (!column.source) return;
    const columns = read.get(column.source.key) ?? new Set<string>();
    columns.add(column.source.column);
    read.set(column.source.key, columns);
  };

  const queryNode = (n: Node, outer: Scope | undefined, ctes: Map<string, Column[]>): Column[] => {
    const scopeCtes = withCtes(n, outer, ctes);
    switch (n.type) {
      case 'SELECT_NODE':
        return selectNode(n, outer, scopeCtes);
      case 'SET_OPERATION_NODE': {
        const left = queryNode(n.left as Node, outer, scopeCtes);
        const right = queryNode(n.right as Node, outer, scopeCtes);
        walkModifiers(n, { bindings: [], ctes: scopeCtes, parent: outer });
        // BY NAME pairs columns by name, in an order this analysis does not follow: all masked if any is.
        if (text(n.setop_type).endsWith('BY_NAME')) {
          const any = [...left, ...right].some((column) => column.masked);
          return left.map((column) => ({ name: column.name, masked: any }));
        }
        return left.map((column, i) => ({ name: column.name, masked: column.masked || (right[i]?.masked ?? false) }));
      }
      case 'RECURSIVE_CTE_NODE': {
        const left = queryNode(n.left as Node, outer, scopeCtes);
        const named = new Map(scopeCtes).set(String(n.ctename).toLowerCase(), left);
        const right = queryNode(n.right as Node, outer, named);
        return left.map((column, i) => ({ name: column.name, masked: column.masked || (right[i]?.masked ?? false) }));
      }
      default:
        throw new QueryRefused(`This kind of query is not supported (${String(n.type)})`);
    }
  };

  const withCtes = (n: Node, outer: Scope | undefined, ctes: Map<string, Column[]>): Map<string, Column[]> => {
    const entries = ((n.cte_map as { map?: { key: string; value: { query: { node: Node }; aliases?: string[] } }[] })?.map ??
      []) as { key: string; value: { query: { node: Node }; aliases?: string[] } }[];
    let scope = ctes;
    for (const entry of entries) {
      const columns = queryNode(entry.value.query.node, outer, scope);
      const aliases = entry.value.aliases ?? [];
      scope = new Map(scope).set(
        entry.key.toLowerCase(),
        columns.map((column, i) => ({ ...column, name: aliases[i] ?? column.name })),
      );
    }
    return scope;
  };

  const selectNode = (n: Node, outer: Scope | undefined, ctes: Map<string, Column[]>): Column[] => {
    const bindings = tableRef(n.from_table as Node | null, outer, ctes);
    const scope: Scope = { bindings, ctes, parent: outer, aliases: new Map() };
    const outputs: Column[] = [];
    for (const item of n.select_list as Node[]) {
      if (item.class === 'STAR' && item.columns !== true && item.expr === null) {
        for (const column of star(item, scope)) outputs.push(column);
        continue;
      }
      const masked = expression(item, scope);
      const name = typeof item.alias === 'string' && item.alias !== '' ? item.alias : columnName(item);
      scope.aliases!.set(name.toLowerCase(), masked);
      outputs.push({ name, masked });
    }
    for (const key of ['where_clause', 'group_expressions', 'having', 'qualify', 'sample']) expression(n[key], scope);
    walkModifiers(n, scope);
    return outputs;
  };

  const walkModifiers = (n: Node, scope: Scope) => {
    expression(n.modifiers, scope);
  };

  const star = (item: Node, scope: Scope): Column[] => {
    const relation = text(item.relation_name).toLowerCase();
    const excluded = new Set(((item.exclude_list as unknown[]) ?? []).map((name) => String(name).toLowerCase()));
    const replaced = new Map<string, boolean>();
    for (const replacement of (item.replace_list as { key: string; value: Node }[]) ?? []) {
      replaced.set(replacement.key.toLowerCase(), expression(replacement.value, scope));
    }
    const bindings = relation === '' ? scope.bindings : scope.bindings.filter((binding) => binding.alias === relation);
    if (relation !== '' && bindings.length === 0) throw new QueryRefused(`Unknown table or alias "${relation}" in ${relation}.*`);
    const columns: Column[] = [];
    for (const binding of bindings) {
      for (const column of binding.columns) {
        const key = column.name.toLowerCase();
        if (excluded.has(key) || (relation === '' && binding.hidden.has(key))) continue;
        markRead(column);
        columns.push(replaced.has(key) ? { name: column.name, masked: replaced.get(key)! } : column);
      }
    }
    return columns;
  };

  const tableRef = (ref: Node | null, outer: Scope | undefined, ctes: Map<string, Column[]>): Binding[] => {
    if (!ref || ref.type === 'EMPTY') return [];
    const alias = typeof ref.alias === 'string' ? ref.alias.toLowerCase() : '';
    const renamed = (columns: Column[]) => {
      const names = (ref.column_name_alias as string[] | undefined) ?? [];
      return columns.map((column, i) => ({ ...column, name: names[i] ?? column.name }));
    };
    switch (ref.type) {
      case 'BASE_TABLE': {
        const schema = text(ref.schema_name);
        const name = String(ref.table_name);
        if (ref.catalog_name)
          throw new QueryRefused(
            `Tables are named dataset_name.table_name; "${text(ref.catalog_name)}.${schema}.${name}" is not readable`,
          );
        if (ref.at_clause) throw new QueryRefused('AT (time travel) clauses are not supported');
        if (schema === '') {
          const cte = ctes.get(name.toLowerCase());
          if (!cte) {
            throw new QueryRefused(
              `Unknown table "${name}": name tables as dataset_name.table_name, of the datasets this query's project may read`,
            );
          }
          return [{ alias: alias || name.toLowerCase(), columns: renamed(cte), hidden: new Set() }];
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
        ref.alias = ref.alias || name;
        return [
          {
            alias: alias || name.toLowerCase(),
            columns: renamed(
              table.columns.map((column) => ({ name: column.name, masked: column.masked, source: { key, column: column.name } })),
            ),
            hidden: new Set(),
          },
        ];
      }
      case 'SUBQUERY': {
        const columns = queryNode((ref.subquery as { node: Node }).node, outer, ctes);
        return [{ alias, columns: renamed(columns), hidden: new Set() }];
      }
      case 'JOIN': {
        const left = tableRef(ref.left as Node, outer, ctes);
        const right = tableRef(ref.right as Node, { bindings: left, ctes, parent: outer }, ctes);
        const using = ((ref.using_columns as string[]) ?? []).map((name) => name.toLowerCase());
        if (ref.ref_type === 'NATURAL') {
          const leftNames = new Set(left.flatMap((binding) => binding.columns.map((column) => column.name.toLowerCase())));
          for (const binding of right)
            for (const column of binding.columns)
              if (leftNames.has(column.name.toLowerCase())) using.push(column.name.toLowerCase());
        }
        const hiddenRight = right.map((binding) => ({ ...binding, hidden: new Set([...binding.hidden, ...using]) }));
        const bindings = [...left, ...hiddenRight];
        // USING columns are read from both sides; a masked side makes the merged column masked.
        for (const name of using)
          for (const binding of bindings)
            for (const column of binding.columns) if (column.name.toLowerCase() === name) markRead(column);
        expression(ref.condition, { bindings, ctes, parent: outer });
        return bindings;
      }
      case 'EXPRESSION_LIST': {
        const rows = (ref.values as Node[][]) ?? [];
        const scope: Scope = { bindings: [], ctes, parent: outer };
        const width = rows[0]?.length ?? 0;
        const columns: Column[] = Array.from({ length: width }, (_, i) => ({
          name: `col${i}`,
          masked: rows.some((row) => expression(row[i], scope)),
        }));
        return [{ alias, columns: renamed(columns), hidden: new Set() }];
      }
      case 'TABLE_FUNCTION': {
        const fn = (ref.function as Node | undefined)?.function_name;
        throw new QueryRefused(
          `Table functions are not allowed (${String(fn)}): a query reads the tables of its project's datasets only`,
        );
      }
      default:
        throw new QueryRefused(`This kind of table reference is not supported (${String(ref.type)})`);
    }
  };

  /** Walks an expression (or any part of the tree): checks functions and subqueries, and says whether it reads a masked column. */
  const expression = (value: unknown, scope: Scope): boolean => {
    if (Array.isArray(value)) return value.reduce<boolean>((masked, item) => expression(item, scope) || masked, false);
    if (!value || typeof value !== 'object') return false;
    const n = value as Node;
    switch (n.class) {
      case 'COLUMN_REF':
        return columnRef(n.column_names as string[], scope);
      case 'SUBQUERY': {
        const columns = queryNode((n.subquery as { node: Node }).node, scope, scope.ctes);
        const child = expression(n.child, scope);
        return child || columns.some((column) => column.masked);
      }
      case 'STAR':
        // COLUMNS(*), struct_pack(*) and the like: every column in scope.
        return scope.bindings.some((binding) => binding.columns.some((column) => (markRead(column), column.masked)));
      case 'FUNCTION':
        checkFunction(n);
        break;
      default:
        break;
    }
    return Object.values(n).reduce<boolean>((masked, child) => expression(child, scope) || masked, false);
  };

  const columnRef = (names: string[], scope: Scope): boolean => {
    const lowered = names.map((name) => name.toLowerCase());
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      // `alias.column` (or a struct field `column.field`, read as the column).
      if (lowered.length >= 2) {
        const qualified = s.bindings.filter((binding) => binding.alias === lowered[lowered.length - 2]);
        const hit = qualified.flatMap((binding) =>
          binding.columns.filter((column) => column.name.toLowerCase() === lowered[lowered.length - 1]),
        );
        if (hit.length > 0) return hit.map((column) => (markRead(column), column.masked)).some(Boolean);
      }
      const hit = s.bindings.flatMap((binding) => binding.columns.filter((column) => column.name.toLowerCase() === lowered[0]));
      if (hit.length > 0) return hit.map((column) => (markRead(column), column.masked)).some(Boolean);
      const alias = s.aliases?.get(lowered[0]!);
      if (alias !== undefined) return alias;
    }
    // A table's name as a value is its whole row (a struct): every column of it.
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      const rows = s.bindings.filter((binding) => lowered.includes(binding.alias));
      if (rows.length > 0)
        return rows.flatMap((binding) => binding.columns.map((column) => (markRead(column), column.masked))).some(Boolean);
    }
    // A lambda's parameter, or a name DuckDB will reject when it binds.
    return false;
  };

  const outputs = queryNode(node, undefined, new Map());
  const datasets = new Set([...catalog.values()].flatMap((table) => (table ? [physical(table.ref).dataset] : [])));
  sweep(node, datasets);
  return {
    tree: node,
    masked: outputs.map((column) => column.masked),
    names: outputs.map((column) => column.name),
    readsMasked,
    read,
  };
}

/**
 * A last look at the whole rewritten tree, whatever path led there: no table function anywhere,
 * and every table is a rewritten readable one or a CTE name (unqualified, which the walk above checked).
 */
function sweep(value: unknown, datasets: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) sweep(item, datasets);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const n = value as Node;
  if (n.type === 'TABLE_FUNCTION') throw new QueryRefused('Table functions are not allowed');
  if (n.type === 'BASE_TABLE' && (n.catalog_name || (n.schema_name !== '' && !datasets.has(String(n.schema_name))))) {
    throw new QueryRefused('The query names a table that is not readable');
  }
  for (const child of Object.values(n)) sweep(child, datasets);
}

function checkFunction(n: Node): void {
  const name = String(n.function_name).toLowerCase();
  if (n.catalog || n.schema)
    throw new QueryRefused(`Functions are called by their names alone; "${String(n.schema)}.${name}" is refused`);
  if (REFUSED_FUNCTIONS.has(name) || REFUSED_FUNCTION_PREFIXES.some((prefix) => name.startsWith(prefix))) {
    throw new QueryRefused(`The function ${name} is not allowed in queries`);
  }
}

/** A name from the tree: a string, or '' for anything else. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function columnName(item: Node): string {
  if (item.class === 'COLUMN_REF') {
    const names = item.column_names as string[];
    return names[names.length - 1]!;
  }
  return '';
}
