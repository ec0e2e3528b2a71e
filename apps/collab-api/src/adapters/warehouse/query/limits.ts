/**
 * What a query would build from constants, counted on DuckDB's parse tree before it runs (pure).
 *
 * DuckDB evaluates a function whose arguments are all constants while it plans the query
 * (constant folding), into values of some 100 bytes per list element, and no interrupt reaches it
 * there: `range(100000000)` took 10 GB and minutes (measured with 1.5.6) before the query started.
 * So the lists that such calls build are counted here, and a query whose constant list would hold
 * more than the limit is refused before it runs. This is a complement: lists built from columns at
 * run time, and anything else a query allocates, are bounded by the process's memory budget
 * (src/memory), where DuckDB's own allocation fails with "Out of Memory".
 *
 * The model knows the functions that make lists longer than their arguments (range and
 * generate_series, list_resize and array_resize, repeat, the string splitters), counts the values
 * of a list written out (`[a, b, c]`) and adds up the lists of any other call's arguments. Dates, timestamps and intervals written as constants count
 * in microseconds (a month as 30 days), so a constant range over time is counted too. A lambda
 * (`list_transform(range(n), x -> ...)`) runs once a value of its list: what its body builds counts
 * that many times, so that lambdas nested over constant lists (billions of calls folded, none
 * interruptible) are counted as the work they are. Its parameters count as constants there.
 * The edit distances (levenshtein and its kin) compare two texts in steps of one character of each,
 * so two constant texts of 70,000 characters are 4.9 billion steps, some twenty seconds folded;
 * and a text built from constants (repeat, lpad, rpad) costs a step a character it holds: eight
 * md5s of `repeat('a0', 500000000)` folded for 14 s, past any timeout. Steps are counted over the
 * whole query (every select item, every clause), at most MAX_FOLDED_STEPS.
 */

import { constantText } from './analyze.js';

type Node = Record<string, unknown>;

/**
 * A constant expression's measure: the list elements it holds (or builds on the way), the
 * characters of its text, its number (if any), the steps its edit distances take (if any);
 * `lambda` for a lambda, whose body runs per value.
 */
interface Measure {
  elements: number;
  chars: number;
  number?: number;
  steps?: number;
  lambda?: boolean;
}

/** Steps of text built or compared from constants a query may take while it is planned: well under a second of one core. */
export const MAX_FOLDED_STEPS = 100_000_000;
/** Functions whose work is the product of their two texts' lengths. */
const QUADRATIC_TEXT = new Set(['levenshtein', 'damerau_levenshtein', 'editdist3', 'jaro_similarity', 'jaro_winkler_similarity']);
const stepsOf = (args: Measure[]) => args.reduce((total, arg) => total + (arg.steps ?? 0), 0);

const MICROS: Record<string, number> = {
  microsecond: 1,
  millisecond: 1e3,
  second: 1e6,
  minute: 60e6,
  hour: 3600e6,
  day: 86_400e6,
  week: 7 * 86_400e6,
  month: 30 * 86_400e6,
  year: 365 * 86_400e6,
  decade: 3650 * 86_400e6,
  century: 36_500 * 86_400e6,
  millennium: 365_000 * 86_400e6,
};

const TEMPORAL_TYPES = new Set(['DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS']);
const SPLITTERS = new Set([
  'string_split',
  'str_split',
  'string_to_array',
  'split',
  'string_split_regex',
  'str_split_regex',
  'regexp_split_to_array',
]);
const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '//': (a, b) => Math.trunc(a / b),
  '%': (a, b) => a % b,
};
const ROUNDING: Record<string, (a: number) => number> = {
  trunc: Math.trunc,
  floor: Math.floor,
  ceil: Math.ceil,
  ceiling: Math.ceil,
  round: Math.round,
  abs: Math.abs,
};

/**
 * The first call with constant arguments whose list would hold more than `maxListElements`
 * values (the innermost, which builds it, rather than those that pass it on), as a message for
 * the caller; undefined when there is none.
 */
export function oversizedConstantList(tree: unknown, limits: { maxListElements: number }): string | undefined {
  // Two views of a node: as it is, and inside a lambda's body, where the parameters count as constants.
  const measured = { plain: new WeakMap<Node, Measure | null>(), inLambda: new WeakMap<Node, Measure | null>() };
  const measureOf = (node: Node, inLambda = false) => {
    const cache = inLambda ? measured.inLambda : measured.plain;
    if (!cache.has(node))
      cache.set(node, measure(node, (child, lambda) => measureOf(child, inLambda || lambda), inLambda) ?? null);
    return cache.get(node) ?? undefined;
  };
  let totalSteps = 0;
  /** `counted`: an enclosing call's measure holds this node's steps already. */
  const find = (value: unknown, counted: boolean): string | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    const node = value as Node;
    const measured = node.class === 'FUNCTION' ? measureOf(node) : undefined;
    for (const child of Array.isArray(value) ? (value as unknown[]) : childrenOf(node)) {
      const found = find(child, counted || measured !== undefined);
      if (found) return found;
    }
    const elements = measured?.elements ?? 0;
    const steps = measured?.steps ?? 0;
    if (!counted) totalSteps += steps;
    if (elements <= limits.maxListElements && (steps > MAX_FOLDED_STEPS || totalSteps > MAX_FOLDED_STEPS)) {
      const shown = Math.max(steps, totalSteps).toLocaleString('en', { maximumSignificantDigits: 3 });
      return (
        `${String(node.function_name)}(...) would take the query to ${shown} steps building or comparing texts from constants ` +
        `before it runs, where nothing can stop it (a step a character built or compared); a query may take at most ` +
        MAX_FOLDED_STEPS.toLocaleString('en')
      );
    }
    if (elements <= limits.maxListElements) return undefined;
    if (elements === Infinity) {
      return (
        `${String(node.function_name)}(...) runs a lambda over a list built from constants, and the lambda builds lists whose length ` +
        'depends on its parameters (a range or repeat over them): the checker cannot count them before the query runs, so it is refused'
      );
    }
    return (
      `${String(node.function_name)}(...) would build a list of ${Math.round(elements).toLocaleString('en')} values from constants ` +
      `before the query runs; a query may build at most ${limits.maxListElements.toLocaleString('en')} so`
    );
  };
  return find(tree, false);
}

/**
 * A node's fields, where a table function in FROM (`FROM range(400000000)`) counts as its
 * arguments alone: it yields its rows while the query runs, where the timeout and a cancel stop
 * it; only its arguments are folded before.
 */
function childrenOf(node: Node): unknown[] {
  const tableFunction = node.type === 'TABLE_FUNCTION' ? (node.function as Node | undefined) : undefined;
  if (tableFunction?.class !== 'FUNCTION') return Object.values(node);
  return Object.entries(node).map(([key, value]) => (key === 'function' ? tableFunction.children : value));
}

/**
 * The measure of a constant expression; undefined for anything that reads a column or a subquery
 * (inside a lambda's body, a column reference is one of its parameters, or a column: either way
 * counted as a constant, which overcounts a lambda that DuckDB runs per row rather than folds).
 */
function measure(
  node: Node,
  measureOf: (node: Node, inLambda?: boolean) => Measure | undefined,
  inLambda: boolean,
): Measure | undefined {
  switch (node.class) {
    case 'CONSTANT':
      return constant(node.value as Node);
    case 'COLUMN_REF':
      return inLambda ? { elements: 0, chars: 0 } : undefined;
    case 'LAMBDA': {
      const body = measureOf(node.expr as Node, true);
      return body && { elements: body.elements, chars: 0, steps: body.steps, lambda: true };
    }
    case 'CAST': {
      const child = measureOf(node.child as Node);
      return child && cast(child, node.child as Node, (node.cast_type as Node | undefined)?.id);
    }
    case 'FUNCTION': {
      const args = (node.children as Node[]).map((child) => measureOf(child));
      if (args.some((arg) => arg === undefined)) return undefined;
      return call(String(node.function_name).toLowerCase(), args as Measure[], inLambda);
    }
    case 'COMPARISON':
    case 'CONJUNCTION':
    case 'OPERATOR':
    case 'BETWEEN':
    case 'CASE': {
      // What their operands build, added up (a comparison or a condition builds no list of its own).
      const operands = expressionsIn(node).map((child) => measureOf(child));
      if (operands.some((operand) => operand === undefined)) return undefined;
      return call('', operands as Measure[], inLambda);
    }
    default:
      return undefined;
  }
}

/** The expressions an expression node holds, wherever they sit among its fields (`left`, `children`, `case_checks`...). */
function expressionsIn(node: Node): Node[] {
  const found: Node[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      if (typeof (value as Node).class === 'string') found.push(value as Node);
      else Object.values(value).forEach(walk);
    }
  };
  for (const [key, value] of Object.entries(node)) if (key !== 'class' && key !== 'type') walk(value);
  return found;
}

function constant(value: Node): Measure {
  const type = String((value.type as Node | undefined)?.id);
  if (value.is_null) return { elements: 0, chars: 0 };
  const raw = value.value;
  if (typeof raw === 'string' && type === 'VARCHAR') return { elements: 0, chars: raw.length };
  const text = constantText(raw);
  const number = Number(text);
  const chars = text.length;
  if (!Number.isFinite(number)) return { elements: 0, chars };
  // DECIMAL constants hold their digits as an integer, with the scale apart.
  const scale = type === 'DECIMAL' ? Number(((value.type as Node).type_info as Node | undefined)?.scale ?? 0) : 0;
  return { elements: 0, chars, number: number / 10 ** scale };
}

function cast(child: Measure, childNode: Node, type: unknown): Measure {
  const text = childNode.class === 'CONSTANT' ? (childNode.value as Node).value : undefined;
  if (typeof text === 'string' && TEMPORAL_TYPES.has(String(type))) return { ...child, number: epochMicros(text) };
  if (typeof text === 'string' && type === 'INTERVAL') return { ...child, number: intervalMicros(text) };
  return child;
}

/** `'2020-01-01'`, `'2020-01-01 10:00:00'` (UTC unless it says otherwise) in microseconds since 1970; undefined for other spellings. */
function epochMicros(text: string): number | undefined {
  const iso = text.trim().replace(' ', 'T');
  const withTime = iso.includes('T') ? iso : `${iso}T00:00:00`;
  const millis = Date.parse(/([zZ]|[+-]\d\d(:?\d\d)?)$/.test(withTime) ? withTime : `${withTime}Z`);
  return Number.isNaN(millis) ? undefined : millis * 1000;
}

/** `'3 days'`, `'1 hour'`, `'2 months 4 days'` in microseconds; undefined for other spellings. */
function intervalMicros(text: string): number | undefined {
  const parts = [...text.toLowerCase().matchAll(/(-?\d+(?:\.\d+)?)\s*([a-z]+?)s?\b/g)];
  if (parts.length === 0) return undefined;
  let total = 0;
  for (const [, amount, unit] of parts) {
    const micros = MICROS[unit!];
    if (micros === undefined) return undefined;
    total += Number(amount) * micros;
  }
  return total;
}

/**
 * A call's measure. Inside a lambda's body, a list of a length the arguments do not tell (a
 * range over the lambda's parameter, a repeat of it) counts as unbounded: the lambda runs over a
 * list of constants, folded where nothing stops it, and nothing bounds what it builds.
 */
function call(name: string, args: Measure[], inLambda: boolean): Measure {
  const lambdas = args.filter((arg) => arg.lambda);
  if (lambdas.length > 0) {
    // list_transform, list_filter, list_reduce, ...: the lists, and each lambda's body once a value of theirs.
    const values = args.reduce((total, arg) => total + (arg.lambda ? 0 : arg.elements), 0);
    const body = lambdas.reduce((total, lambda) => total + lambda.elements, 0);
    const steps = values * stepsOf(lambdas) + stepsOf(args.filter((arg) => !arg.lambda));
    return { elements: values * (1 + body), chars: args.reduce((total, arg) => total + arg.chars, 0), steps };
  }
  const numbers = args.map((arg) => arg.number);
  const sum = (key: 'elements' | 'chars') => args.reduce((total, arg) => total + arg[key], 0);
  const passed = { elements: sum('elements'), chars: sum('chars'), steps: stepsOf(args) };
  if (QUADRATIC_TEXT.has(name) && args.length >= 2) {
    return { ...passed, steps: passed.steps + (args[0]!.chars + 1) * (args[1]!.chars + 1) };
  }
  if (ARITHMETIC[name] && args.length === 2 && numbers[0] !== undefined && numbers[1] !== undefined) {
    return { ...passed, number: ARITHMETIC[name](numbers[0], numbers[1]) };
  }
  if (name === '-' && args.length === 1 && numbers[0] !== undefined) return { ...passed, number: -numbers[0] };
  if (ROUNDING[name] && numbers[0] !== undefined) return { ...passed, number: ROUNDING[name](numbers[0]) };
  const unit = /^to_(\w+?)s?$/.exec(name)?.[1];
  if (unit && MICROS[unit] !== undefined && numbers[0] !== undefined) return { ...passed, number: numbers[0] * MICROS[unit] };
  // `[a, b, c]`: its values, and theirs.
  if (name === 'list_value' || name === 'array_value') return { elements: args.length + passed.elements, chars: passed.chars };
  if (name === 'range' || name === 'generate_series') {
    const count = seriesLength(numbers, name === 'generate_series');
    if (count !== undefined) return { elements: count, chars: 0 };
    return inLambda ? { elements: Infinity, chars: 0 } : passed;
  }
  const resized = name === 'list_resize' || name === 'array_resize' || name === 'repeat';
  if (resized && numbers[1] === undefined && inLambda) return { elements: Infinity, chars: Infinity };
  if ((name === 'list_resize' || name === 'array_resize') && numbers[1] !== undefined) {
    return { elements: args[0]!.elements + Math.max(0, numbers[1]) * (1 + (args[2]?.elements ?? 0)), chars: passed.chars };
  }
  if (name === 'repeat' && numbers[1] !== undefined) {
    const times = Math.max(0, numbers[1]);
    const chars = args[0]!.chars * times;
    return { elements: args[0]!.elements * times, chars, steps: passed.steps + chars };
  }
  if ((name === 'lpad' || name === 'rpad') && numbers[1] !== undefined) {
    const chars = Math.max(0, numbers[1]);
    return { ...passed, chars, steps: passed.steps + chars };
  }
  if (SPLITTERS.has(name)) return { elements: args[0]!.chars + 1, chars: args[0]!.chars };
  return passed;
}

/** Values of range(stop), range(start, stop[, step]) (stop excluded) or generate_series (stop included). */
function seriesLength(numbers: (number | undefined)[], inclusive: boolean): number | undefined {
  if (numbers.length === 0 || numbers.some((number) => number === undefined)) return undefined;
  const [start, stop, step] = numbers.length === 1 ? [0, numbers[0]!, 1] : [numbers[0]!, numbers[1]!, numbers[2] ?? 1];
  if (step === 0) return undefined;
  const span = (stop - start) / step;
  return Math.max(0, inclusive ? Math.floor(span) + 1 : Math.ceil(span));
}
