/**
 * Failure messages of query jobs, pure. A job that reads a table of another tenant with private
 * columns never shows the warehouse's message: a failing CAST, `error()`, `strptime` or JSON
 * function puts the value it failed on into the text. Its failure names DuckDB's error class and,
 * where DuckDB points at one, the position in the caller's own text; nothing else.
 */

export interface Position {
  line: number;
  column: number;
}

// DuckDB's exception types (ExceptionTypeToString): the class is taken only from this list, so
// that no part of a value can pass for one.
const ERROR_CLASSES = [
  'Invalid',
  'Out of Range',
  'Conversion',
  'Unknown Type',
  'Decimal',
  'Mismatch Type',
  'Divide by Zero',
  'Object Size',
  'Invalid type',
  'Serialization',
  'TransactionContext',
  'Not implemented',
  'Expression',
  'Catalog',
  'Parser',
  'Binder',
  'Planner',
  'Scheduler',
  'Executor',
  'Constraint',
  'Index',
  'Stat',
  'Connection',
  'Syntax',
  'Settings',
  'Optimizer',
  'NullPointer',
  'IO',
  'INTERRUPT',
  'FATAL',
  'INTERNAL',
  'Invalid Input',
  'Out of Memory',
  'Permission',
  'Parameter Not Resolved',
  'Parameter Not Allowed',
  'Dependency',
  'HTTP',
  'Missing Extension',
  'Auto-load',
  'Sequence',
  'INVALID CONFIGURATION',
];
const CLASS = new RegExp(`^(${ERROR_CLASSES.map((name) => name.replace(/[-]/g, '\\$&')).join('|')}) Error:`);

/** DuckDB's error class ("Conversion Error"), or "Error" when the message starts with none it knows. */
export function errorClass(message: string): string {
  const match = CLASS.exec(message);
  return match ? `${match[1]} Error` : 'Error';
}

/** The class of an error DuckDB reports by its type in lower case (json_serialize_plan's `error_type`). */
export function errorClassOfType(type: string): string {
  const name = ERROR_CLASSES.find((candidate) => candidate.toLowerCase() === type.toLowerCase());
  return name ? `${name} Error` : 'Error';
}

/** The message of a failure whose details are withheld. */
export function withheldMessage(kind: string, position?: Position): string {
  const where = position ? ` at line ${position.line}, column ${position.column}` : '';
  return `${kind}${where}. The details are withheld: this query reads a table of another tenant that has private columns or an aggregation rule`;
}

/**
 * The offset in `sql` (characters) that DuckDB's message points at with its `LINE n:` excerpt
 * and caret; undefined when it points nowhere or the excerpt is not found exactly once.
 */
export function pointedOffset(message: string, sql: string): number | undefined {
  const lines = message.split('\n');
  const at = lines.findIndex((line) => /^LINE \d+: /.test(line));
  const caretLine = lines[at + 1];
  if (at === -1 || caretLine === undefined) return undefined;
  const [, number, shown] = /^LINE (\d+): (.*)$/.exec(lines[at]!)!;
  let column = caretLine.indexOf('^') - `LINE ${number}: `.length;
  let excerpt = shown!;
  // DuckDB shows at most 40 characters on either side, marking a cut with "...".
  if (excerpt.startsWith('...')) {
    excerpt = excerpt.slice(3);
    column -= 3;
  }
  if (excerpt.endsWith('...')) excerpt = excerpt.slice(0, -3);
  // The caret counts rendered widths: only plain ASCII before it is counted here.
  if (column < 0 || excerpt === '' || /[^\x20-\x7e]/.test(excerpt.slice(0, column))) return undefined;
  const sqlLines = sql.split('\n');
  const line = sqlLines[Number(number) - 1];
  if (line === undefined) return undefined;
  const first = line.indexOf(excerpt);
  if (first === -1 || line.indexOf(excerpt, first + 1) !== -1) return undefined;
  const lineStart = sqlLines.slice(0, Number(number) - 1).reduce((sum, text) => sum + text.length + 1, 0);
  return lineStart + first + column;
}

/** A node of a parse tree that has a location: its kind and its byte offset. */
export interface Located {
  kind: string;
  at: number;
}

/** The `query_location` of every node of a parse tree (json_serialize_sql) that has one, in the tree's order. */
export function locations(tree: unknown): Located[] {
  const found: Located[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const n = value as Record<string, unknown>;
    // DuckDB writes 2^64 - 1 for "no location".
    if (typeof n.query_location === 'number' && Number.isSafeInteger(n.query_location)) {
      found.push({ kind: String(n.class ?? n.type), at: n.query_location });
    }
    for (const child of Object.values(n)) walk(child);
  };
  walk(tree);
  return found;
}

/**
 * Where a node that sits at `printedAt` (bytes) in the printed statement sits in the caller's
 * text: printing and parsing again keeps the tree's shape, so both trees list the same nodes in
 * the same order. Undefined when they do not, or no node sits there.
 */
export function callerLocation(caller: Located[], printed: Located[], printedAt: number): number | undefined {
  if (caller.length !== printed.length || caller.some((node, i) => node.kind !== printed[i]!.kind)) return undefined;
  const index = printed.findIndex((node) => node.at === printedAt);
  return index === -1 ? undefined : caller[index]!.at;
}

/** Byte offset (UTF-8) of a character offset. */
export function byteOffset(text: string, characters: number): number {
  return Buffer.byteLength(text.slice(0, characters));
}

/** Line and column (from 1, in characters) of a byte offset (UTF-8) into `text`. */
export function positionAt(text: string, bytes: number): Position {
  const before = Buffer.from(text, 'utf8').subarray(0, bytes).toString('utf8');
  const lastNewline = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: before.length - lastNewline };
}
