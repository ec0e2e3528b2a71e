/**
 * The analysis rules a table's owner sets, enforced on every other tenant's query, as pure checks
 * over what DuckDB bound (the plan lineage.ts follows) and parsed (the checked parse tree). A
 * tenant's own tables carry no rule.
 *
 * - Join-only private columns (joinOnlyRefusal): a private column of another tenant's table may
 *   be a key of an equality join (`ON a.x = b.y`, `USING (x)`) against a column of a table, or be
 *   selected as it is (it comes back null); any other use refuses the query.
 * - Aggregation thresholds (aggregationRefusal, thresholdInstances, thresholdSql): a query that
 *   reads a table with one must aggregate, in a shape whose every group the threshold can be
 *   applied to; the sandbox then adds the threshold to its HAVING, so that groups with fewer
 *   distinct privacy units (of every reference to every such table) than the strictest rule asks
 *   are dropped before ORDER BY, LIMIT or DISTINCT see them.
 *
 * Fail closed: a query whose shape these checks cannot prove keeps the rules is refused, saying why.
 */
import type { Equality, Lineage, ReferencedColumn, SourceColumn } from './lineage.js';

/** An aggregation threshold: groups need at least `minDistinct` distinct values of `privacyUnit`. */
export interface AggregationRule {
  privacyUnit: string;
  minDistinct: number;
}

/** A table of the query with an aggregation rule, by its catalog key. */
export interface RuleTable {
  key: string;
  rule: AggregationRule;
}

type Node = Record<string, unknown>;

const JOIN_ONLY =
  "is join-only for your tenant (a private column of another tenant's table): it may only be a key of an equality join " +
  '(ON a.x = b.y, or USING (x)) with a column of a table, or be selected as it is (it comes back null)';

const CLAUSES: Record<string, string> = {
  select: 'an expression (a function, an operator, a cast or CASE)',
  where: 'a filter (WHERE, HAVING, QUALIFY, or a join condition on one side only)',
  group: 'GROUP BY',
  aggregate: 'an aggregate function',
  window: 'a window function (its argument, PARTITION BY or ORDER BY)',
  order: 'ORDER BY (positional references included)',
  distinct: 'DISTINCT',
  limit: 'LIMIT or OFFSET',
  unnest: 'UNNEST',
  values: 'VALUES',
  table_function: "a table function's arguments",
  set: 'a set operation (UNION, INTERSECT or EXCEPT)',
  correlate: 'a correlated subquery (IN, EXISTS or a scalar subquery)',
};

const COMPARISONS: Record<string, string> = {
  COMPARE_NOTEQUAL: '<>',
  COMPARE_LESSTHAN: '<',
  COMPARE_GREATERTHAN: '>',
  COMPARE_LESSTHANOREQUALTO: '<=',
  COMPARE_GREATERTHANOREQUALTO: '>=',
  COMPARE_DISTINCT_FROM: 'IS DISTINCT FROM',
  COMPARE_NOT_DISTINCT_FROM: 'IS NOT DISTINCT FROM',
};

const named = (column: SourceColumn) => `${column.table}.${column.column}`;
const masked = (sources: SourceColumn[]) => sources.find((source) => source.masked);

/**
 * Why the query breaks the join-only rule of a masked column (naming the column, the rule and the
 * use), or undefined when it keeps it. Without lineage (a plan lineage.ts does not follow), or with
 * a use it could not follow, a query that reads a masked table is refused: nothing proves the rule kept.
 */
export function joinOnlyRefusal(lineage: Lineage | undefined, readsMaskedTable: boolean): string | undefined {
  if (!readsMaskedTable) return undefined;
  const unproven =
    'This query reads a table of another tenant that has private (join-only) columns, and the rules checker cannot follow its plan, so it cannot prove the columns are used only as join keys: it is refused. Write it with plain joins, filters and subqueries';
  if (!lineage) return unproven;
  if (lineage.columns.some((column) => column.opaque)) return unproven;
  for (const use of lineage.uses) {
    if (use.clause !== 'join') {
      const column = masked(use.columns.sources);
      if (column) return `Column ${named(column)} ${JOIN_ONLY}; this query uses it in ${CLAUSES[use.clause] ?? use.clause}`;
      if (use.columns.opaque) return unproven;
      continue;
    }
    const key = masked(use.left.sources) ?? masked(use.right.sources);
    if (!key) {
      if (use.left.opaque || use.right.opaque) return unproven;
      continue;
    }
    const rule = `Column ${named(key)} ${JOIN_ONLY}`;
    if (use.left.opaque || use.right.opaque) return unproven;
    if (use.comparison !== 'COMPARE_EQUAL') {
      const operator = COMPARISONS[use.comparison];
      return operator
        ? `${rule}; this query compares it with ${operator} in a join condition`
        : `${rule}; this query uses it in a join condition that is not an equality of two columns`;
    }
    if (use.computed) {
      return `${rule}; this query computes on it in a join condition (a function, an operator or a cast): compare the column as it is`;
    }
    const [keySide, other] = masked(use.left.sources) === key ? [use.left, use.right] : [use.right, use.left];
    if (other.sources.length === 0) {
      return `${rule}; this query joins it to constants (a literal, VALUES, range or unnest), which would test guesses: the other side must be a column of a table`;
    }
    // A column of a table mixed into made values (`name || r.range`, `[..., name]`) makes guesses all the same.
    if (other.made) {
      return `${rule}; this query joins it to values the query makes (an expression, a literal, VALUES, range, unnest, an aggregate or a window, in a subquery or CTE), which would test guesses: the other side must be a column of a table as it is stored`;
    }
    const same = (a: SourceColumn) => (b: SourceColumn) => a.masked && a.table === b.table && a.column === b.column;
    const shared = keySide.sources.find((source) => other.sources.some(same(source)));
    if (shared) {
      return `Column ${named(shared)} ${JOIN_ONLY}; this query joins it with itself, which would show which rows share a value`;
    }
  }
  const linked = selfLinkedColumn(lineage.equalities);
  if (linked) {
    return `Column ${named(linked)} ${JOIN_ONLY}; this query joins two references of it through columns equal to both (p1.x = t.y AND p2.x = t.y), which joins it with itself and would show which rows share a value`;
  }
  return undefined;
}

/** A masked column of the query's tables, for maskedNoOpRefusal: its name, its table and its DuckDB type. */
export interface MaskedColumn {
  table: string;
  column: string;
  /** As the warehouse declares it (`VARCHAR`, `DECIMAL(38, 9)`, `VARCHAR[]`). */
  duckDbType: string;
}

/** A declared DuckDB type as the parse tree names a cast's type (`VARCHAR`, `DECIMAL`, `LIST`, `TIMESTAMP WITH TIME ZONE`). */
function castTypeId(duckDbType: string): string {
  if (duckDbType.endsWith('[]')) return 'LIST';
  const base = duckDbType.replace(/\(.*$/, '');
  return base === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : base;
}

/**
 * A cast, a collation or a one-argument coalesce applied straight to a masked column (by its name),
 * from the parse tree: refused as any expression on it is (joinOnlyRefusal). They are checked here
 * because DuckDB's binder drops the ones that change nothing (a cast to the column's own type,
 * `coalesce(x)`), so the bound plan shows the column as it is, bare or as a join key. A cast is
 * taken only to the column's own type (any other stays in the plan): a caller's own column of the
 * same name is refused only when cast to that same type, which changes nothing either. Pure.
 */
export function maskedNoOpRefusal(tree: unknown, masked: readonly MaskedColumn[]): string | undefined {
  if (masked.length === 0) return undefined;
  const byName = new Map<string, MaskedColumn[]>();
  for (const column of masked)
    byName.set(column.column.toLowerCase(), [...(byName.get(column.column.toLowerCase()) ?? []), column]);
  const namedBy = (node: unknown): MaskedColumn[] => {
    const ref = node as Node | null;
    if (ref?.class !== 'COLUMN_REF' || !Array.isArray(ref.column_names)) return [];
    return byName.get(String(ref.column_names.at(-1)).toLowerCase()) ?? [];
  };
  const refusal = (column: MaskedColumn, what: string) =>
    `Column ${column.table}.${column.column} ${JOIN_ONLY}; this query uses it in ${what}`;
  const pending: unknown[] = [tree];
  while (pending.length > 0) {
    const value = pending.pop();
    // One by one, not spread: a list of a hundred thousand constants would pass the engine's argument limit.
    if (Array.isArray(value)) {
      for (const item of value as unknown[]) pending.push(item);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const node = value as Node;
    if (node.class === 'CAST') {
      const id = (node.cast_type as Node | undefined)?.id;
      const target = typeof id === 'string' ? id : '';
      const column = namedBy(node.child).find((candidate) => castTypeId(candidate.duckDbType) === target);
      if (column) return refusal(column, 'a cast (CAST, TRY_CAST or ::)');
    } else if (node.class === 'COLLATE') {
      const [column] = namedBy(node.child);
      if (column) return refusal(column, 'a COLLATE');
    } else if (node.type === 'OPERATOR_COALESCE' && Array.isArray(node.children) && node.children.length === 1) {
      const [column] = namedBy(node.children[0]);
      if (column) return refusal(column, 'a function (coalesce)');
    }
    for (const child of Object.values(node)) pending.push(child);
  }
  return undefined;
}

/**
 * A masked column that equalities tie to itself through other columns: two references of its
 * table (two scans, or two references of one CTE) whose values end up in one class of columns
 * the query holds equal (`p1.ssn = a.ssn AND p2.ssn = a.ssn`), as a direct self-join would.
 */
export function selfLinkedColumn(equalities: readonly Equality[]): SourceColumn | undefined {
  const parent = new Map<string, string>();
  const root = (key: string): string => {
    let at = key;
    while (parent.get(at) !== undefined && parent.get(at) !== at) at = parent.get(at)!;
    parent.set(key, at);
    return at;
  };
  const keyOf = (column: ReferencedColumn) => `${column.table}\u0000${column.column}\u0000${column.reference}`;
  const columns = new Map<string, ReferencedColumn>();
  for (const { left, right } of equalities) {
    const sides = [...left, ...right];
    for (const column of sides) columns.set(keyOf(column), column);
    const first = root(keyOf(sides[0]!));
    for (const column of sides.slice(1)) parent.set(root(keyOf(column)), first);
  }
  // Per class, the references of each masked column in it.
  const seen = new Map<string, string>();
  for (const [key, column] of columns) {
    if (!column.masked) continue;
    const slot = `${root(key)}\u0000${column.table}\u0000${column.column}`;
    const reference = seen.get(slot);
    if (reference !== undefined && reference !== column.reference) return column;
    seen.set(slot, column.reference);
  }
  return undefined;
}

/** The strictest threshold of the tables: the highest min_distinct. */
export function strictest(tables: RuleTable[]): number {
  return Math.max(...tables.map((table) => table.rule.minDistinct));
}

function ruleText(tables: RuleTable[]): string {
  const names = [...new Set(tables.map((table) => table.key))].join(', ');
  return `${names} ${tables.length > 1 ? 'have' : 'has'} an aggregation rule (at least ${strictest(tables)} distinct privacy units in every group)`;
}

/**
 * Aggregates whose value no single row decides; min, max, median, first, list, string_agg and the
 * like show one row's value. By the names DuckDB binds: `mean` is avg's alias, `stddev` and
 * `variance` are what stddev_samp and var_samp bind as.
 */
export const THRESHOLD_AGGREGATES = new Set([
  'count_star',
  'count',
  'sum',
  'avg',
  'mean',
  'approx_count_distinct',
  'stddev',
  'stddev_samp',
  'stddev_pop',
  'variance',
  'var_samp',
  'var_pop',
]);

// Operators that may stand above the aggregate: they see its groups (HAVING is a filter).
const ABOVE = new Set([
  'LOGICAL_PROJECTION',
  'LOGICAL_FILTER',
  'LOGICAL_ORDER_BY',
  'LOGICAL_TOP_N',
  'LOGICAL_LIMIT',
  'LOGICAL_DISTINCT',
]);
// Joins that pair rows of tables; MARK, SEMI, ANTI and SINGLE come from subqueries.
const ROW_JOINS = new Set(['INNER', 'LEFT', 'RIGHT', 'OUTER']);

/** What an operator of the plan stands for in the query's text. */
function described(op: Node): string {
  switch (op.type) {
    case 'LOGICAL_WINDOW':
      return 'a window function or QUALIFY';
    case 'LOGICAL_UNION':
    case 'LOGICAL_EXCEPT':
    case 'LOGICAL_INTERSECT':
      return 'a set operation';
    case 'LOGICAL_MATERIALIZED_CTE':
    case 'LOGICAL_CTE_REF':
    case 'LOGICAL_RECURSIVE_CTE':
      return 'a CTE';
    case 'LOGICAL_COMPARISON_JOIN':
    case 'LOGICAL_DELIM_JOIN':
    case 'LOGICAL_CROSS_PRODUCT':
    case 'LOGICAL_ANY_JOIN':
    case 'LOGICAL_DELIM_GET':
      return 'a subquery';
    case 'LOGICAL_AGGREGATE_AND_GROUP_BY':
      return 'a second aggregation (a subquery that aggregates)';
    case 'LOGICAL_PROJECTION':
      return 'a subquery in FROM';
    case 'LOGICAL_EXPRESSION_GET':
    case 'LOGICAL_DUMMY_SCAN':
      return 'VALUES';
    case 'LOGICAL_UNNEST':
      return 'UNNEST';
    case 'LOGICAL_SAMPLE':
      return 'a sample';
    default:
      return `an operator the checker does not know (${String(op.type)})`;
  }
}

const children = (op: Node): Node[] => (Array.isArray(op.children) ? (op.children as Node[]) : []);

function containsAggregate(op: Node): boolean {
  return op.type === 'LOGICAL_AGGREGATE_AND_GROUP_BY' || children(op).some(containsAggregate);
}

/**
 * A column as it is, or a constant, or a cast of one (an aggregate's input that picks no row out).
 * Not a TRY_CAST: it makes null of the values that do not fit (`TRY_CAST(x AS ENUM('20'))`), a filter.
 */
function plainArgument(expression: Node): boolean {
  switch (expression.expression_class) {
    case 'BOUND_REF':
    case 'BOUND_COLUMN_REF':
    case 'BOUND_CONSTANT':
      return true;
    case 'BOUND_CAST':
      return expression.try_cast !== true && plainArgument((expression.child ?? {}) as Node);
    default:
      return false;
  }
}

/** Why an aggregate of the plan cannot be thresholded, or undefined. */
function aggregateProblem(expression: Node): string | undefined {
  if (expression.expression_class !== 'BOUND_AGGREGATE') return 'an aggregate the checker does not know';
  const name = String(expression.name);
  if (!THRESHOLD_AGGREGATES.has(name)) {
    return `the aggregate ${name}, which shows a single row's value (allowed: count, sum, avg, approx_count_distinct, stddev and variance)`;
  }
  if (expression.filter) return 'an aggregate with FILTER, which would pick rows out of a group';
  const orders = (expression.order_bys as { orders?: unknown[] } | null)?.orders;
  if (Array.isArray(orders) && orders.length > 0) return 'an aggregate with ORDER BY';
  const args = Array.isArray(expression.children) ? (expression.children as Node[]) : [];
  if (!args.every(plainArgument)) {
    return `${name} over an expression (aggregate columns as they are: an expression such as CASE inside an aggregate would pick single rows out of a group)`;
  }
  return undefined;
}

/**
 * Why a query that reads the tables with aggregation rules `tables` cannot run under them, from
 * its bound plan (one entry of json_serialize_plan's `plans`), or undefined when its shape is one
 * the threshold applies to: operators that see groups only (projections, HAVING, ORDER BY,
 * LIMIT, DISTINCT) above one aggregate, and below it only scans of tables, filters and joins of
 * their rows; its aggregates THRESHOLD_AGGREGATES of plain columns.
 */
export function aggregationRefusal(plan: Node, tables: RuleTable[]): string | undefined {
  const unproven = (what: string) =>
    `${ruleText(tables)}: a query that reads it must be one SELECT that groups rows of tables and their joins at one level (no subquery, CTE, set operation, ROLLUP, CUBE, GROUPING SETS, window function or QUALIFY; the aggregates count, sum, avg, approx_count_distinct, stddev or variance of columns as they are, without FILTER), so that the threshold holds for every group. This query has ${what}, so it is refused`;
  let op = plan;
  while (ABOVE.has(String(op.type))) {
    const [only, ...more] = children(op);
    if (!only || more.length > 0) return unproven('an operator with several inputs above its aggregate');
    op = only;
  }
  if (op.type !== 'LOGICAL_AGGREGATE_AND_GROUP_BY') {
    if (!containsAggregate(plan)) {
      return `${ruleText(tables)}: its owner allows only aggregating queries on it. Every row of the result must be a group (GROUP BY, or aggregate functions alone); groups with fewer distinct privacy units are dropped`;
    }
    return unproven(described(op));
  }
  // ROLLUP, CUBE and GROUPING SETS group the same rows at several levels: each level's groups meet the
  // threshold, but two levels differ by the groups it dropped (a total minus the groups shown).
  if (Array.isArray(op.grouping_sets) && op.grouping_sets.length > 1) {
    return unproven(
      'several grouping sets (ROLLUP, CUBE or GROUPING SETS), whose levels differ by the groups the threshold drops',
    );
  }
  for (const expression of Array.isArray(op.expressions) ? (op.expressions as Node[]) : []) {
    const problem = aggregateProblem(expression);
    if (problem) return unproven(problem);
  }
  const below = (node: Node): string | undefined => {
    switch (node.type) {
      case 'LOGICAL_GET':
        return node.name === 'seq_scan' ? undefined : `the table function ${String(node.name)}`;
      case 'LOGICAL_FILTER':
      case 'LOGICAL_CROSS_PRODUCT':
      case 'LOGICAL_ANY_JOIN':
        break;
      case 'LOGICAL_COMPARISON_JOIN':
        if (!ROW_JOINS.has(String(node.join_type))) return 'a subquery (IN, EXISTS or a scalar subquery)';
        break;
      default:
        return described(node);
    }
    for (const child of children(node)) {
      const problem = below(child);
      if (problem) return problem;
    }
    return undefined;
  };
  const problem = children(op).map(below).find(Boolean);
  return problem ? unproven(problem) : undefined;
}

/** A reference to a table with an aggregation rule in the query's FROM clause: the name it goes by there. */
export interface ThresholdInstance {
  alias: string;
  key: string;
  /** The caller wrote no alias (`alias` is the table's name, as DuckDB's checked statement names it). */
  unaliased: boolean;
}

/**
 * The references to rule tables in the checked parse tree's top SELECT, which the threshold
 * counts privacy units of, or why they cannot be found: the top node must be one SELECT without
 * CTEs whose FROM clause holds tables and joins only, each rule table once. `keyOf` names a table reference's catalog
 * key from its (physical) schema and table names.
 */
export function thresholdInstances(
  tree: Node,
  tables: RuleTable[],
  names: { keyOf: (schema: string, table: string) => string | undefined; unaliased: Set<unknown> },
): ThresholdInstance[] | string {
  const unproven = (what: string) =>
    `${ruleText(tables)}: a query that reads it must be one SELECT over tables and their joins, so that the threshold applies to every group. This query has ${what}, so it is refused`;
  if (tree.type !== 'SELECT_NODE') return unproven('a set operation or PIVOT at its top');
  const ctes = (tree.cte_map as { map?: unknown[] } | undefined)?.map ?? [];
  if (ctes.length > 0) return unproven('a CTE (WITH)');
  const ruled = new Set(tables.map((table) => table.key));
  const found: ThresholdInstance[] = [];
  const walk = (ref: Node): string | undefined => {
    if (ref.type === 'JOIN') return walk(ref.left as Node) ?? walk(ref.right as Node);
    if (ref.type !== 'BASE_TABLE') return `a subquery, VALUES or a table function in FROM`;
    const key = names.keyOf(String(ref.schema_name), String(ref.table_name));
    if (!key || !ruled.has(key)) return undefined;
    // `AS v(a, b, ...)` renames the columns: the threshold's `v.<unit>` would count another column.
    if (Array.isArray(ref.column_name_alias) && ref.column_name_alias.length > 0) {
      return `column aliases on ${key} (AS name(a, b, ...)), which rename its privacy unit; alias the columns in the SELECT list instead`;
    }
    // Two references of one table can be filtered apart (`a LEFT JOIN b ON ... AND b.unit <> 4`), and
    // their aggregates then differ by single units (`sum(a.x) - sum(b.x)`) in groups that meet the threshold.
    if (found.some((instance) => instance.key === key)) {
      return `${key} more than once (a self-join), whose references, filtered apart, would differ by single privacy units`;
    }
    found.push({ alias: String(ref.alias), key, unaliased: names.unaliased.has(ref) });
    return undefined;
  };
  const problem = walk((tree.from_table ?? {}) as Node);
  return problem ? unproven(problem) : found;
}

/** The threshold of the query's rule tables: every reference's privacy unit column and the strictest min_distinct. */
export interface Threshold {
  units: { alias: string; key: string; unaliased: boolean; unit: string }[];
  minDistinct: number;
}

export function threshold(instances: ThresholdInstance[], tables: RuleTable[]): Threshold {
  const unitOf = new Map(tables.map((table) => [table.key, table.rule.privacyUnit]));
  return {
    units: instances.map((instance) => ({ ...instance, unit: unitOf.get(instance.key)! })),
    minDistinct: strictest(tables),
  };
}

/**
 * The threshold as an expression over the top SELECT's groups: at least `minDistinct` distinct
 * privacy units of every reference to a rule table (count(DISTINCT) ignores nulls, so rows without
 * a unit count for none). `qualifier` names a reference's columns; `quote` quotes an identifier
 * (DuckDB's `"`, GoogleSQL's backticks).
 */
export function thresholdSql(
  threshold: Threshold,
  dialect: { quote: (name: string) => string; qualifier: (unit: Threshold['units'][number]) => string },
): string {
  return `(${threshold.units
    .map((unit) => `COUNT(DISTINCT ${dialect.qualifier(unit)}.${dialect.quote(unit.unit)}) >= ${threshold.minDistinct}`)
    .join(' AND ')})`;
}

/** DuckDB's quoting of an identifier. */
export const duckDbQuoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
