/**
 * GoogleSQL text as tokens, and the one rewrite query jobs on BigQuery need: the tables a query
 * names as `dataset_name.table_name` become their physical `project.dataset.table`, pure
 * functions. The tokenizer knows every GoogleSQL literal and comment (strings of any quote,
 * triple-quoted, raw and bytes; backtick identifiers, `a.b` inside one backtick pair or
 * `a`.`b`; `--`, `#` and `/* *\/` comments), so a name inside a string or a comment is never
 * taken for a table. Only paths in table position (after FROM, JOIN, a comma of a FROM list, and
 * the targets of INTO, UPDATE, TABLE, MERGE, ...) are tables; each must be readable, a CTE, or a
 * path under an alias of the statement (`FROM t AS o, o.items`), else the query is refused. The
 * dry run's referencedTables (query/bigquery.ts) stays the authority on what runs; this rewrite
 * gives it the physical names and refuses early, naming the table as the caller wrote it.
 */
import type { TableRef } from '../interface.js';
import { catalogKey, type ReadableCatalog } from './analyze.js';
import { QueryFailure } from './interface.js';

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol' | 'comment' | 'space';

export interface Token {
  kind: TokenKind;
  text: string;
  start: number;
  end: number;
}

const STRING_PREFIX = /^(?:[rR][bB]?|[bB][rR]?)?(?:'''|"""|'|")/;

/** GoogleSQL's tokens; unterminated strings, identifiers and comments are an invalidQuery failure. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number) => {
    tokens.push({ kind, text: sql.slice(i, end), start: i, end });
    i = end;
  };
  while (i < sql.length) {
    const rest = sql.slice(i, i + 4);
    const char = sql[i]!;
    if (/\s/.test(char)) {
      let end = i + 1;
      while (end < sql.length && /\s/.test(sql[end]!)) end += 1;
      push('space', end);
    } else if (rest.startsWith('--') || char === '#') {
      const newline = sql.indexOf('\n', i);
      push('comment', newline === -1 ? sql.length : newline);
    } else if (rest.startsWith('/*')) {
      const close = sql.indexOf('*/', i + 2);
      if (close === -1) throw new QueryFailure('invalidQuery', 'Syntax error: unclosed comment');
      push('comment', close + 2);
    } else if (STRING_PREFIX.test(sql.slice(i, i + 5))) {
      const opening = STRING_PREFIX.exec(sql.slice(i, i + 5))![0];
      const quote = opening.replace(/^[rRbB]+/, '');
      push('string', quotedEnd(sql, i + opening.length, quote, 'string literal'));
    } else if (char === '`') {
      push('quoted', quotedEnd(sql, i + 1, '`', 'identifier'));
    } else if (/[A-Za-z_]/.test(char)) {
      push('word', wordEnd(sql, i));
    } else if (/[0-9]/.test(char) || (char === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      push('number', /^(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[A-Za-z_0-9]*)/.exec(sql.slice(i))![0].length + i);
    } else {
      push('symbol', i + 1);
    }
  }
  return tokens;
}

function wordEnd(sql: string, from: number): number {
  let end = from;
  while (end < sql.length && /[A-Za-z0-9_]/.test(sql[end]!)) end += 1;
  return end;
}

/** Where a literal opened by `quote` ends; a backslash escapes the next character (raw strings too, for lexing). */
function quotedEnd(sql: string, from: number, quote: string, what: string): number {
  for (let i = from; i < sql.length; i += 1) {
    if (sql[i] === '\\') {
      i += 1;
      continue;
    }
    if (sql.startsWith(quote, i)) return i + quote.length;
    // Only triple-quoted strings span lines.
    if (sql[i] === '\n' && quote.length === 1 && quote !== '`') break;
  }
  throw new QueryFailure('invalidQuery', `Syntax error: unclosed ${what}`);
}

/** The parts of a backtick identifier: `` `a.b` `` is the path a.b; escapes are kept as written. */
function quotedParts(text: string): string[] {
  return text.slice(1, -1).split('.');
}

/** Keywords after which a path names a table. */
const TABLE_KEYWORDS = new Set(['FROM', 'JOIN', 'INTO', 'UPDATE', 'TABLE', 'MERGE', 'INSERT', 'DELETE', 'USING']);
/** Keywords that end a FROM list (its commas no longer separate tables). */
const FROM_ENDS = new Set([
  'WHERE',
  'GROUP',
  'HAVING',
  'QUALIFY',
  'WINDOW',
  'ORDER',
  'LIMIT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'SELECT',
]);
/** Words after a table that are not its alias. */
const NOT_ALIASES = new Set([
  ...FROM_ENDS,
  'AS',
  'ON',
  'USING',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'FULL',
  'CROSS',
  'OUTER',
  'NATURAL',
  'FOR',
  'TABLESAMPLE',
  'PIVOT',
  'UNPIVOT',
  'WITH',
  'SET',
  'VALUES',
  'WHEN',
  'MATCHED',
  'THEN',
  'DEFAULT',
  'FROM',
]);

export interface RewrittenQuery {
  /** The statement with physical table names, without a final semicolon. */
  sql: string;
  /** Catalog keys of the tables it names, each once. */
  tables: string[];
}

/**
 * Rewrites the tables of one statement to `` `project.dataset.table` ``. Refused (QueryFailure
 * 'accessDenied'): a path in table position that is not readable, an ambiguous name, a
 * project-qualified or three-part path, a table function, or more than one statement.
 */
export function rewriteTables(
  sql: string,
  catalog: ReadableCatalog,
  physical: (ref: TableRef) => { project: string; dataset: string; table: string },
): RewrittenQuery {
  const tokens = tokenize(sql);
  const significant = tokens.filter((token) => token.kind !== 'space' && token.kind !== 'comment');
  const lastStatementEnd = singleStatement(significant);
  const named = new Set<string>(collectDefinedNames(significant));
  const edits: { start: number; end: number; text: string }[] = [];
  const tables = new Set<string>();
  // Per open parenthesis: whether its FROM list is open, and whether it is EXTRACT's (whose FROM is no table).
  const levels: { inFrom: boolean; extract: boolean }[] = [{ inFrom: false, extract: false }];
  let tablePosition = false;
  let insertTarget = false;
  for (let index = 0; index < significant.length; index += 1) {
    const token = significant[index]!;
    const level = levels[levels.length - 1]!;
    const word = token.kind === 'word' ? token.text.toUpperCase() : '';
    // Keywords in table position (INSERT INTO, DELETE FROM, FROM UNNEST(...)) are no tables.
    const keyword = TABLE_KEYWORDS.has(word) || NOT_ALIASES.has(word) || word === 'UNNEST' || word === 'LATERAL';
    if (tablePosition && (token.kind === 'quoted' || (token.kind === 'word' && !keyword))) {
      tablePosition = false;
      const path = readPath(significant, index);
      index = path.next - 1;
      // A column list follows INSERT's table; a parenthesis after a FROM or JOIN path is a table function's call.
      if (significant[path.next]?.text === '(' && !insertTarget) {
        throw new QueryFailure(
          'accessDenied',
          `Table functions are not allowed (${path.parts.join('.')}): a query reads tables only`,
        );
      }
      const alias = aliasAfter(significant, path.next);
      if (alias) named.add(alias.toLowerCase());
      const target = tableOf(path.parts, catalog, named);
      if (target) {
        tables.add(target.key);
        const names = physical(target.ref);
        edits.push({ start: path.start, end: path.end, text: `\`${names.project}.${names.dataset}.${names.table}\`` });
      }
      continue;
    }
    tablePosition = false;
    if (token.text === '(') {
      levels.push({ inFrom: false, extract: significant[index - 1]?.text.toUpperCase() === 'EXTRACT' });
    } else if (token.text === ')') {
      if (levels.length > 1) levels.pop();
    } else if (token.text === ',' && level.inFrom) {
      tablePosition = true;
      insertTarget = false;
    } else if (word === 'FROM') {
      // EXTRACT(part FROM value) and IS [NOT] DISTINCT FROM are no FROM clauses.
      const operator = level.extract || significant[index - 1]?.text.toUpperCase() === 'DISTINCT';
      if (!operator) level.inFrom = tablePosition = true;
      insertTarget = false;
    } else if (FROM_ENDS.has(word)) {
      level.inFrom = false;
    } else if (TABLE_KEYWORDS.has(word)) {
      // JOIN ... USING (columns) names columns.
      tablePosition = !(word === 'USING' && significant[index + 1]?.text === '(');
      insertTarget = word === 'INTO' || word === 'INSERT';
    }
  }
  let rewritten = sql.slice(0, lastStatementEnd);
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    rewritten = rewritten.slice(0, edit.start) + edit.text + rewritten.slice(edit.end);
  }
  return { sql: rewritten, tables: [...tables] };
}

/** Where the one statement ends (before a final `;`); a second statement is refused. */
function singleStatement(significant: Token[]): number {
  const semicolon = significant.findIndex((token) => token.text === ';');
  if (semicolon === -1) return significant.at(-1)?.end ?? 0;
  if (significant.slice(semicolon + 1).some((token) => token.text !== ';')) {
    throw new QueryFailure('accessDenied', 'A query is exactly one SELECT statement: scripts and several statements are refused');
  }
  return significant[semicolon - 1]?.end ?? 0;
}

/** CTE and window names (`name AS (`) and aliases (`AS name`): paths under them are no tables. */
function collectDefinedNames(significant: Token[]): string[] {
  const names: string[] = [];
  significant.forEach((token, i) => {
    if (token.kind !== 'word' || token.text.toUpperCase() !== 'AS') return;
    const before = significant[i - 1];
    const after = significant[i + 1];
    if (after?.text === '(' && before && (before.kind === 'word' || before.kind === 'quoted')) names.push(nameOf(before));
    if (after && (after.kind === 'word' || after.kind === 'quoted')) names.push(nameOf(after));
  });
  return names.map((name) => name.toLowerCase());
}

function nameOf(token: Token): string {
  return token.kind === 'quoted' ? token.text.slice(1, -1) : token.text;
}

/** A dotted path from `index`: words and backtick identifiers (each may hold dots), joined by `.` and, in project names, `-`. */
function readPath(significant: Token[], index: number): { parts: string[]; start: number; end: number; next: number } {
  const parts: string[] = [];
  let i = index;
  let pending = '';
  for (;;) {
    const token = significant[i]!;
    const split = token.kind === 'quoted' ? quotedParts(token.text) : [token.text];
    parts.push(pending + split[0]!, ...split.slice(1));
    pending = '';
    const next = significant[i + 1];
    const after = significant[i + 2];
    const joinable = after && (after.kind === 'word' || after.kind === 'quoted' || after.kind === 'number');
    if (next?.text === '.' && joinable) {
      i += 2;
      continue;
    }
    // An unquoted project name may hold dashes (`my-project.dataset.table`): one part, written without spaces.
    if (next?.text === '-' && joinable && next.start === token.end && after.start === next.end && token.kind !== 'quoted') {
      pending = `${parts.pop()!}-`;
      i += 2;
      continue;
    }
    return { parts, start: significant[index]!.start, end: token.end, next: i + 1 };
  }
}

function aliasAfter(significant: Token[], index: number): string | undefined {
  const token = significant[index];
  if (!token) return undefined;
  if (token.kind === 'word' && token.text.toUpperCase() === 'AS') {
    const name = significant[index + 1];
    return name && (name.kind === 'word' || name.kind === 'quoted') ? nameOf(name) : undefined;
  }
  if (token.kind === 'quoted') return nameOf(token);
  if (token.kind === 'word' && !NOT_ALIASES.has(token.text.toUpperCase())) return token.text;
  return undefined;
}

/** The readable table a path names; undefined for a CTE or a path under an alias; refused otherwise. */
function tableOf(parts: string[], catalog: ReadableCatalog, named: Set<string>): { ref: TableRef; key: string } | undefined {
  const written = parts.join('.');
  if (named.has(parts[0]!.toLowerCase())) return undefined;
  if (parts.length === 1) {
    throw new QueryFailure(
      'accessDenied',
      `Unknown table "${written}": name tables as dataset_name.table_name, of the datasets this query's project may read`,
    );
  }
  if (parts.length > 2) {
    throw new QueryFailure('accessDenied', `Tables are named dataset_name.table_name; "${written}" is not readable`);
  }
  const key = catalogKey(parts[0]!, parts[1]!);
  const table = catalog.get(key);
  if (table === null) {
    throw new QueryFailure('accessDenied', `"${written}" is ambiguous: two datasets this project reads are named "${parts[0]}"`);
  }
  if (!table) {
    throw new QueryFailure('accessDenied', `Table "${written}" is not one this query's project may read (or does not exist)`);
  }
  return { ref: table.ref, key };
}

/**
 * `sql` as text that GoogleSQL and DuckDB read alike, for a query that DuckDB's sandbox checks
 * under analysis rules before BigQuery runs it: comments dropped as GoogleSQL reads them (`#`
 * lines; no nesting, which DuckDB has), and refused what the two dialects read differently:
 * strings other than plain single-quoted ones without backslashes, double-quoted strings
 * (DuckDB's identifiers), adjacent strings (one string with a quote in DuckDB) and `$` (DuckDB's
 * dollar quoting). Otherwise a text could show DuckDB's checker one query and BigQuery another.
 */
export function commonText(sql: string): string {
  const refuse = (what: string) =>
    new QueryFailure(
      'accessDenied',
      `This query reads a table of another tenant with analysis rules, which are checked by reading it as DuckDB's SQL too: ${what} reads differently in GoogleSQL and DuckDB, so the query is refused. Use plain single-quoted strings without backslashes`,
    );
  let previous: Token | undefined;
  const parts: string[] = [];
  for (const token of tokenize(sql)) {
    if (token.kind === 'comment') {
      parts.push(' ');
      continue;
    }
    if (token.kind === 'string') {
      if (!/^'[^'\\]*'$/.test(token.text)) throw refuse(`the string ${token.text.slice(0, 40)}`);
      if (previous?.kind === 'string') throw refuse('two strings side by side');
    }
    if (token.kind === 'symbol' && token.text === '$') throw refuse('$');
    if (token.kind !== 'space') previous = token;
    parts.push(token.text);
  }
  return parts.join('');
}

const CLAUSES_AFTER_GROUPS = new Set(['HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT']);

/**
 * `sql`, one SELECT whose shape rules.ts proved (no CTE, set operation or subquery around its
 * groups), with `threshold` in its top-level HAVING, the caller's own condition evaluated only for
 * groups that meet it; and the statement that counts the groups the threshold drops (before the
 * caller's own HAVING, ORDER BY and LIMIT).
 */
export function withThreshold(sql: string, threshold: string): { sql: string; suppressedSql: string } {
  const significant = tokenize(sql).filter((token) => token.kind !== 'space' && token.kind !== 'comment');
  let depth = 0;
  const clauses: { word: string; token: Token }[] = [];
  for (const token of significant) {
    if (token.text === '(') depth += 1;
    else if (token.text === ')') depth -= 1;
    else if (depth === 0 && token.kind === 'word' && CLAUSES_AFTER_GROUPS.has(token.text.toUpperCase())) {
      clauses.push({ word: token.text.toUpperCase(), token });
    }
  }
  const end = significant.at(-1)?.end ?? sql.length;
  const having = clauses.find((clause) => clause.word === 'HAVING');
  const after = clauses.find((clause) => clause.word !== 'HAVING' && (!having || clause.token.start > having.token.start));
  const groupsEnd = clauses[0]?.token.start ?? end;
  const suppressedSql = `SELECT COUNT(*) AS n FROM (${sql.slice(0, groupsEnd)} HAVING NOT ${threshold})`;
  if (having) {
    const conditionEnd = after?.token.start ?? end;
    return {
      // CASE, not AND: BigQuery evaluates a THEN only when its WHEN holds, so the caller's HAVING never sees a dropped group.
      sql: `${sql.slice(0, having.token.end)} CASE WHEN ${threshold} THEN (${sql.slice(having.token.end, conditionEnd)}) ELSE FALSE END ${sql.slice(conditionEnd)}`,
      suppressedSql,
    };
  }
  const at = after?.token.start ?? end;
  return { sql: `${sql.slice(0, at)} HAVING ${threshold} ${sql.slice(at)}`, suppressedSql };
}
