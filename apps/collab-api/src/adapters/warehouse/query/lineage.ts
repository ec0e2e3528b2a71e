/**
 * Column lineage of a query, from DuckDB's bound logical plan (`json_serialize_plan`, unoptimized:
 * the operators as the binder planned the query). Pure.
 *
 * The binder has already resolved every way a query can name a column: `*` and `COLUMNS(...)`,
 * positional `#n`, `USING` and `NATURAL` joins, `struct.*`, aliases through CTEs and subqueries,
 * `GROUP BY ALL`/`ORDER BY ALL`, `UNION BY NAME`, PIVOT and UNPIVOT, a table's name as its whole
 * row. In the plan each expression points at a column of its operator's input (`BOUND_REF`, an
 * index; or `BOUND_COLUMN_REF`, a binding), so lineage flows operator by operator from the table
 * scans up: a column derives from every source column anywhere in its expression (arguments,
 * CASE conditions, aggregate filters and orders, window partitions and orders, lambda captures).
 * Filters, join conditions, grouping, ordering and DISTINCT select rows but do not make values:
 * they are recorded as uses, clause by clause, not as lineage of the columns they pass through;
 * so are expressions that compute on a column, set operations and correlations (what the
 * analysis rules of rules.ts restrict).
 *
 * Fail closed: an operator this code does not know throws LineageUnknown (the caller then treats
 * every column as private once a masked table is read, and the analysis rules refuse the query), and a reference that cannot be resolved
 * makes its column opaque (private once a masked table is read). A scan of anything but a stand-in
 * of a readable table or an allowed table function is refused outright.
 */
import { QueryRefused } from './analyze.js';
import { ALLOWED_TABLE_FUNCTIONS } from './functions.js';

/** A column of a readable table, by the catalog key the query names its table by. */
export interface SourceColumn {
  table: string;
  column: string;
  /** Another tenant's private column. */
  masked: boolean;
}

/**
 * What a column's values (or a clause's expression) derive from; `opaque` when that could not be
 * followed; `made` when they may be made by the query (an expression, a constant, VALUES, a table
 * function, an aggregate or window) rather than be values its tables store, as they are.
 */
export interface Derivation {
  sources: SourceColumn[];
  opaque: boolean;
  made: boolean;
}

/**
 * Where a column's values are used other than passed on as they are: `select` is an expression of
 * a select list that computes on it (a function, an operator, a cast, CASE; a bare reference is
 * no use), `set` a column of a set operation, `correlate` a column a correlated subquery reads.
 */
export type Clause =
  | 'select'
  | 'where'
  | 'group'
  | 'aggregate'
  | 'window'
  | 'order'
  | 'distinct'
  | 'limit'
  | 'unnest'
  | 'values'
  | 'table_function'
  | 'set'
  | 'correlate';

/**
 * Where source columns are used: join conditions side by side with their comparison
 * (`COMPARE_EQUAL`, ...) and whether either side computes on its columns rather than naming one
 * as it is; other clauses whole.
 */
export type ClauseUse =
  | { clause: 'join'; comparison: string; left: Derivation; right: Derivation; computed: boolean }
  | { clause: Clause; columns: Derivation };

/** A source column as one reference of its table reads it: each scan, and each reference to a CTE, is one. */
export interface ReferencedColumn extends SourceColumn {
  reference: string;
}

/** Two sides the query compares for equality (a join key, or `=` in a filter), by the references their values come from. */
export interface Equality {
  left: ReferencedColumn[];
  right: ReferencedColumn[];
}

export interface Lineage {
  /** Per result column, in order. */
  columns: Derivation[];
  uses: ClauseUse[];
  /** Every equality of the query: which references' rows it ties together. */
  equalities: Equality[];
  /** Columns the scans read, by catalog key (what the cost counts). */
  read: Map<string, Set<string>>;
}

/** A stand-in the plan scans: a readable table under its physical name. */
export interface StandIn {
  key: string;
  columns: { name: string; masked: boolean }[];
}

/** The plan has a shape this code does not follow. */
export class LineageUnknown extends Error {
  override name = 'LineageUnknown';
}

type Node = Record<string, unknown>;

/**
 * A column while the plan is walked: source ids (`table\0column`), the references they come through
 * (`id\u0001reference`), opacity and whether the query makes its values.
 */
interface Col {
  ids: ReadonlySet<string>;
  refs: ReadonlySet<string>;
  opaque: boolean;
  made: boolean;
}

const NONE: Col = { ids: new Set(), refs: new Set(), opaque: false, made: false };
const OPAQUE: Col = { ids: new Set(), refs: new Set(), opaque: true, made: true };
// Values the query makes from no column: a table function's rows, a scan's rowid.
const GENERATED: Col = { ids: new Set(), refs: new Set(), opaque: false, made: true };
const REFERENCE = '\u0001';
const EQUALITIES = new Set(['COMPARE_EQUAL', 'COMPARE_NOT_DISTINCT_FROM']);
const madeOf = (col: Col): Col => (col.made ? col : { ...col, made: true });
// A recursive CTE's lineage grows with each pass; more passes than this is not a plan DuckDB makes.
const MAX_RECURSION_PASSES = 64;

function union(cols: readonly Col[]): Col {
  if (cols.length === 1) return cols[0]!;
  const ids = new Set<string>();
  const refs = new Set<string>();
  let opaque = false;
  let made = false;
  for (const col of cols) {
    for (const id of col.ids) ids.add(id);
    for (const ref of col.refs) refs.add(ref);
    opaque ||= col.opaque;
    made ||= col.made;
  }
  return { ids, refs, opaque, made };
}

function sameCols(a: readonly Col[], b: readonly Col[]): boolean {
  return (
    a.length === b.length &&
    a.every((col, i) => col.opaque === b[i]!.opaque && col.made === b[i]!.made && col.ids.size === b[i]!.ids.size)
  );
}

/**
 * Lineage of `plan` (one entry of json_serialize_plan's `plans`), whose scans of `catalog` (the
 * attached stand-in database) are looked up by `standIn(schema, table)`.
 */
export function planLineage(
  plan: Node,
  options: { catalog: string; standIn: (schema: string, table: string) => StandIn | undefined },
): Lineage {
  const sources = new Map<string, SourceColumn>();
  const read = new Map<string, Set<string>>();
  const uses = new Map<string, ClauseUse>();
  const equalities: Equality[] = [];
  let references = 0;
  // Every binding the plan has made so far ("table_index.column_index"): BOUND_COLUMN_REF points there.
  const bindings = new Map<string, Col>();
  const ctes = new Map<number, Col[]>();
  // The duplicate-eliminated columns of each delim join whose right side is being walked.
  const delimStack: Col[] = [];

  const derivation = (col: Col): Derivation => ({
    sources: [...col.ids].map((id) => sources.get(id)!),
    opaque: col.opaque,
    made: col.made,
  });
  const use = (clause: Clause, col: Col) => {
    if (col.ids.size === 0 && !col.opaque) return;
    const entry: ClauseUse = { clause, columns: derivation(col) };
    uses.set(JSON.stringify(entry), entry);
  };
  const referenced = (col: Col): ReferencedColumn[] =>
    [...col.refs].map((ref) => {
      const [id, reference] = ref.split(REFERENCE) as [string, string];
      return { ...sources.get(id)!, reference };
    });
  const equality = (left: Col, right: Col) => {
    if (left.refs.size > 0 && right.refs.size > 0) equalities.push({ left: referenced(left), right: referenced(right) });
  };
  /** The equalities (`=`, IS NOT DISTINCT FROM) anywhere in a filter's or a join's expression. */
  const equalitiesIn = (expression: unknown, input: readonly Col[]): void => {
    if (Array.isArray(expression)) {
      for (const item of expression) equalitiesIn(item, input);
      return;
    }
    if (!expression || typeof expression !== 'object') return;
    const n = expression as Node;
    if (n.expression_class === 'BOUND_COMPARISON' && EQUALITIES.has(String(n.type))) {
      equality(derive(n.left, input), derive(n.right, input));
    }
    for (const child of Object.values(n)) equalitiesIn(child, input);
  };
  const joinUse = (comparison: string, left: Col, right: Col, computed: boolean) => {
    if (left.ids.size + right.ids.size === 0 && !left.opaque && !right.opaque) return;
    const entry: ClauseUse = { clause: 'join', comparison, left: derivation(left), right: derivation(right), computed };
    uses.set(JSON.stringify(entry), entry);
  };
  const register = (tableIndex: unknown, cols: readonly Col[], positions?: readonly number[]) => {
    cols.forEach((col, i) => bindings.set(`${String(tableIndex)}.${positions ? positions[i] : i}`, col));
  };

  /** Every column reference anywhere in `expression`, against `input` (BOUND_REF indexes into it). */
  const derive = (expression: unknown, input: readonly Col[]): Col => {
    const found: Col[] = [];
    const walk = (value: unknown, inLambda: boolean): void => {
      if (Array.isArray(value)) {
        for (const item of value) walk(item, inLambda);
        return;
      }
      if (!value || typeof value !== 'object') return;
      const n = value as Node;
      switch (n.expression_class) {
        case 'BOUND_REF':
          // Inside a lambda's body, references are the lambda's parameters and captures; the
          // captures are also the function's own arguments, where they are counted.
          if (!inLambda) found.push(input[Number(n.index)] ?? OPAQUE);
          return;
        case 'BOUND_COLUMN_REF': {
          const binding = (n.binding ?? {}) as Node;
          found.push(bindings.get(`${String(binding.table_index)}.${String(binding.column_index)}`) ?? OPAQUE);
          return;
        }
        case 'BOUND_LAMBDA_REF':
          return;
        case 'BOUND_SUBQUERY':
          found.push(OPAQUE);
          return;
      }
      for (const [key, child] of Object.entries(n)) walk(child, inLambda || key === 'lambda_expr');
    };
    walk(expression, false);
    return found.length === 0 ? NONE : union(found);
  };

  const list = (value: unknown): Node[] => (Array.isArray(value) ? (value as Node[]) : []);
  const numbers = (value: unknown): number[] => (Array.isArray(value) ? (value as unknown[]).map(Number) : []);
  const mapped = (cols: Col[], map: unknown): Col[] => {
    const positions = numbers(map);
    return positions.length === 0 ? cols : positions.map((i) => cols[i] ?? OPAQUE);
  };
  const width = (value: unknown) => (Array.isArray(value) ? value.length : 0);

  const visit = (op: Node): Col[] => {
    const children = list(op.children);
    const only = () => {
      if (children.length !== 1) throw new LineageUnknown(`${String(op.type)} with ${children.length} inputs`);
      return visit(children[0]!);
    };
    switch (op.type) {
      case 'LOGICAL_GET':
        return scan(op, children);
      case 'LOGICAL_PROJECTION': {
        const input = only();
        const out = list(op.expressions).map((expression) => {
          const col = derive(expression, input);
          if (bare(expression)) return col;
          use('select', col);
          return madeOf(col);
        });
        register(op.table_index, out);
        return out;
      }
      case 'LOGICAL_FILTER': {
        const input = only();
        for (const expression of list(op.expressions)) use('where', derive(expression, input));
        equalitiesIn(op.expressions, input);
        return mapped(input, op.projection_map);
      }
      case 'LOGICAL_AGGREGATE_AND_GROUP_BY': {
        const input = only();
        const groups = list(op.groups).map((expression) => {
          const col = derive(expression, input);
          use('group', col);
          return bare(expression) ? col : madeOf(col);
        });
        const aggregates = list(op.expressions).map((expression) => {
          const col = derive(expression, input);
          use('aggregate', col);
          return madeOf(col);
        });
        const groupings = (Array.isArray(op.grouping_functions) ? (op.grouping_functions as unknown[]) : []).map((indexes) =>
          madeOf(union(numbers(indexes).map((i) => groups[i] ?? OPAQUE))),
        );
        register(op.group_index, groups);
        register(op.aggregate_index, aggregates);
        register(op.groupings_index, groupings);
        return [...groups, ...aggregates, ...groupings];
      }
      case 'LOGICAL_WINDOW':
      case 'LOGICAL_UNNEST': {
        const input = only();
        const window = op.type === 'LOGICAL_WINDOW';
        const out = list(op.expressions).map((expression) => {
          const col = derive(expression, input);
          use(window ? 'window' : 'unnest', col);
          return madeOf(col);
        });
        register(window ? op.window_index : op.unnest_index, out);
        return [...input, ...out];
      }
      case 'LOGICAL_ORDER_BY':
      case 'LOGICAL_TOP_N': {
        const input = only();
        for (const order of list(op.orders)) use('order', derive(order, input));
        return mapped(input, op.projections);
      }
      case 'LOGICAL_DISTINCT': {
        const input = only();
        use('distinct', derive([op.distinct_targets, op.order_by], input));
        return input;
      }
      case 'LOGICAL_LIMIT': {
        const input = only();
        use('limit', derive([op.limit_val, op.offset_val], input));
        return input;
      }
      case 'LOGICAL_SAMPLE':
        return only();
      case 'LOGICAL_COMPARISON_JOIN':
      case 'LOGICAL_DELIM_JOIN':
      case 'LOGICAL_ASOF_JOIN':
        return comparisonJoin(op, children);
      case 'LOGICAL_ANY_JOIN': {
        const [left, right] = pair(op, children);
        const condition = derive(op.condition, [...left, ...right]);
        joinUse('ANY', condition, NONE, true);
        equalitiesIn(op.condition, [...left, ...right]);
        return joined(op, left, right, madeOf(condition));
      }
      case 'LOGICAL_CROSS_PRODUCT':
      case 'LOGICAL_POSITIONAL_JOIN': {
        const [left, right] = pair(op, children);
        return [...left, ...right];
      }
      case 'LOGICAL_UNION':
      case 'LOGICAL_EXCEPT':
      case 'LOGICAL_INTERSECT': {
        // Every side's values at a position make that column (EXCEPT and INTERSECT too: which
        // rows remain depends on the other side's values).
        const sides = children.map(visit);
        const count = Number(op.column_count);
        const out = sides.every((side) => side.length === count)
          ? Array.from({ length: count }, (_, i) => union(sides.map((side) => side[i]!)))
          : Array.from({ length: count }, () => union([OPAQUE, ...sides.flat()]));
        for (const col of out) use('set', col);
        register(op.table_index, out);
        return out;
      }
      case 'LOGICAL_MATERIALIZED_CTE': {
        if (children.length !== 2) throw new LineageUnknown('a CTE without its definition and query');
        ctes.set(Number(op.table_index), visit(children[0]!));
        return visit(children[1]!);
      }
      case 'LOGICAL_RECURSIVE_CTE':
        return recursiveCte(op, children);
      case 'LOGICAL_CTE_REF': {
        const cte = ctes.get(Number(op.cte_index));
        if (!cte) throw new LineageUnknown('a reference to a CTE the plan has not defined');
        // Each reference reads the CTE's rows anew: its columns come through references of their own.
        const reference = `cte${String(op.table_index)}`;
        const out =
          cte.length === width(op.chunk_types)
            ? cte.map((col) => ({ ...col, refs: new Set([...col.refs].map((ref) => `${ref}/${reference}`)) }))
            : Array.from({ length: width(op.chunk_types) }, () => OPAQUE);
        register(op.table_index, out);
        return out;
      }
      case 'LOGICAL_DELIM_GET': {
        // The correlated columns of the enclosing delim joins (all of them: a sound superset).
        if (delimStack.length === 0) throw new LineageUnknown('a delim get outside a delim join');
        const all = union(delimStack);
        const out = Array.from({ length: width(op.chunk_types) }, () => all);
        register(op.table_index, out);
        return out;
      }
      case 'LOGICAL_DUMMY_SCAN':
        register(op.table_index, [NONE]);
        return [NONE];
      case 'LOGICAL_EXPRESSION_GET': {
        const input = children.length === 0 ? [] : only();
        const rows = (Array.isArray(op.expressions) ? op.expressions : []) as unknown[][];
        const out = Array.from({ length: width(op.expr_types) }, (_, i) =>
          union([GENERATED, ...rows.map((row) => (Array.isArray(row) && i < row.length ? derive(row[i], input) : OPAQUE))]),
        );
        for (const col of out) use('values', col);
        register(op.table_index, out);
        return out;
      }
      default:
        throw new LineageUnknown(`the plan operator ${String(op.type)}`);
    }
  };

  const pair = (op: Node, children: Node[]): [Col[], Col[]] => {
    if (children.length !== 2) throw new LineageUnknown(`${String(op.type)} with ${children.length} inputs`);
    return [visit(children[0]!), visit(children[1]!)];
  };

  /** A join's output (DuckDB's LogicalJoin::GetColumnBindings): by join type, the mark column made from its condition. */
  const joined = (op: Node, left: Col[], right: Col[], mark: Col): Col[] => {
    const leftOut = mapped(left, op.left_projection_map);
    const rightOut = mapped(right, op.right_projection_map);
    switch (op.join_type) {
      case 'SEMI':
      case 'ANTI':
        return leftOut;
      case 'MARK':
        register(op.mark_index, [mark]);
        return [...leftOut, mark];
      case 'RIGHT_SEMI':
      case 'RIGHT_ANTI':
        return rightOut;
      default:
        return [...leftOut, ...rightOut];
    }
  };

  const comparisonJoin = (op: Node, children: Node[]): Col[] => {
    if (children.length !== 2) throw new LineageUnknown(`${String(op.type)} with ${children.length} inputs`);
    const left = visit(children[0]!);
    const delim = op.type === 'LOGICAL_DELIM_JOIN';
    if (delim) {
      if (op.delim_flipped) throw new LineageUnknown('a flipped delim join');
      const correlated = union([NONE, ...list(op.duplicate_eliminated_columns).map((expression) => derive(expression, left))]);
      use('correlate', correlated);
      delimStack.push(correlated);
    }
    let right: Col[];
    try {
      right = visit(children[1]!);
    } finally {
      if (delim) delimStack.pop();
    }
    const parts: Col[] = [];
    for (const condition of list(op.conditions)) {
      const l = derive(condition.left, left);
      const r = derive(condition.right, right);
      joinUse(String(condition.comparison), l, r, !bare(condition.left) || !bare(condition.right));
      if (EQUALITIES.has(String(condition.comparison))) equality(l, r);
      parts.push(l, r);
    }
    if (op.predicate) {
      const predicate = derive(op.predicate, [...left, ...right]);
      joinUse('PREDICATE', predicate, NONE, true);
      equalitiesIn(op.predicate, [...left, ...right]);
      parts.push(predicate);
    }
    return joined(op, left, right, union([GENERATED, ...parts]));
  };

  /** The anchor's lineage, grown by the recursive part's until it stays the same. */
  const recursiveCte = (op: Node, children: Node[]): Col[] => {
    if (children.length !== 2) throw new LineageUnknown('a recursive CTE without its two parts');
    const index = Number(op.table_index);
    let current = visit(children[0]!);
    for (let pass = 0; pass < MAX_RECURSION_PASSES; pass += 1) {
      ctes.set(index, current);
      const step = visit(children[1]!);
      if (step.length !== current.length) throw new LineageUnknown('a recursive CTE whose parts differ in width');
      const next = current.map((col, i) => union([col, step[i]!]));
      if (sameCols(next, current)) {
        // Its parts meet in a UNION.
        for (const col of current) use('set', col);
        register(op.table_index, current);
        return current;
      }
      current = next;
    }
    throw new LineageUnknown('a recursive CTE whose lineage kept growing');
  };

  /** A table scan (a stand-in) or an allowed table function; anything else is refused. */
  const scan = (op: Node, children: Node[]): Col[] => {
    const indexes = list(op.column_indexes).map((column) => Number(column.index));
    const names = (Array.isArray(op.names) ? op.names : []) as string[];
    const name = String(op.name);
    let input: Col[] = [];
    let cols: Col[];
    if (name === 'seq_scan') {
      const reference = `scan${(references += 1)}`;
      const data = (op.function_data ?? {}) as Node;
      const table = data.catalog === options.catalog ? options.standIn(String(data.schema), String(data.table)) : undefined;
      if (!table || children.length > 0) throw new QueryRefused('The query reads a table that is not readable');
      const byName = new Map(table.columns.map((column) => [column.name.toLowerCase(), column]));
      cols = indexes.map((i) => {
        // Beyond the table's columns: rowid and the like, which hold no value of the table's.
        const column = i < names.length ? byName.get(String(names[i]).toLowerCase()) : undefined;
        if (i < names.length && !column) return OPAQUE;
        if (!column) return GENERATED;
        const id = `${table.key}\u0000${column.name}`;
        sources.set(id, { table: table.key, column: column.name, masked: column.masked });
        const columns = read.get(table.key) ?? new Set<string>();
        read.set(table.key, columns.add(column.name));
        return { ids: new Set([id]), refs: new Set([`${id}${REFERENCE}${reference}`]), opaque: false, made: false };
      });
    } else if (ALLOWED_TABLE_FUNCTIONS.has(name) && children.length <= 1) {
      // Rows made from the arguments, and from the input rows of an in-out call (a lateral unnest).
      input = children.length === 1 ? visit(children[0]!) : [];
      const all = union([GENERATED, derive([op.parameters, op.named_parameters], []), ...input]);
      use('table_function', all);
      cols = indexes.map(() => all);
    } else {
      throw new QueryRefused(`The query reads ${name}, which is not a readable table`);
    }
    // No column read (count(*)): one binding all the same.
    if (indexes.length === 0) cols = [NONE];
    const projection = numbers(op.projection_ids);
    const out = projection.length === 0 || indexes.length === 0 ? cols : projection.map((i) => cols[i] ?? OPAQUE);
    register(op.table_index, out, projection.length === 0 || indexes.length === 0 ? undefined : projection);
    return [...out, ...numbers(op.projected_input).map((i) => input[i] ?? OPAQUE)];
  };

  const columns = visit(plan).map(derivation);
  return { columns, uses: [...uses.values()], equalities, read };
}

/** An expression that names one column as it is: no function, operator or cast around it. */
function bare(expression: unknown): boolean {
  const kind = (expression as Node | null)?.expression_class;
  return kind === 'BOUND_REF' || kind === 'BOUND_COLUMN_REF';
}

/** Whether a result column is masked: it derives from a masked column, or could not be followed while a masked table is read. */
export function isPrivate(column: Derivation, readsMaskedTable: boolean): boolean {
  return column.sources.some((source) => source.masked) || (column.opaque && readsMaskedTable);
}
