import { isUtf8 } from 'node:buffer';
import { INVALID_UTF8, TOO_MANY_CONTAINERS, type ValidationIssue } from '@repo/errors';

/**
 * The most objects and arrays a JSON body may hold. Parsed, each costs some 70 bytes of heap: a
 * 35 MB body of `{},` took 780 MB and three seconds of the event loop, and a pod of 512 MiB died
 * of it. A million (70 MB) is far beyond any request of these APIs; braces inside strings count
 * too, and no real text holds a million.
 */
export const MAX_JSON_CONTAINERS = 1_000_000;

/**
 * express.json's `verify`, run on the raw bytes before they are parsed: a body that is not valid
 * UTF-8 is refused (400), where the JSON decoder would silently store U+FFFD in place of each bad
 * byte; one with more than MAX_JSON_CONTAINERS `{` and `[` is refused (413) before it is parsed.
 */
export function checkJsonBody(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('Request body is not valid UTF-8'), { type: INVALID_UTF8 });
  if (bytesCounted(body, [0x7b, 0x5b], MAX_JSON_CONTAINERS + 1) > MAX_JSON_CONTAINERS) {
    throw Object.assign(new Error('Request body holds too many objects and arrays'), {
      type: TOO_MANY_CONTAINERS,
      limit: MAX_JSON_CONTAINERS,
    });
  }
}

/** How many of `bytes` occur in `body`, counted up to `atMost` (memchr-fast while they are few). */
function bytesCounted(body: Buffer, bytes: number[], atMost: number): number {
  let count = 0;
  for (const byte of bytes) {
    for (let at = body.indexOf(byte); at >= 0 && count < atMost; at = body.indexOf(byte, at + 1)) count++;
  }
  return count;
}

/**
 * How deeply objects and arrays may nest in a request: as deep as BigQuery's JSON values, and far
 * from what would overflow the stack of the recursive code every value meets after this check
 * (JSON.stringify, Prisma's serialiser, a walk over A2A messages: a body nested 20,000 deep
 * answered 500 and 502 there).
 */
export const MAX_INPUT_NESTING = 500;

const TOO_DEEP = 'too_deep';

/**
 * Whether objects and arrays nest in `value` more than `limit` levels deep: for values that come
 * from elsewhere than a request (an agent's answer), before recursive code (JSON.stringify) meets
 * them. Iterative; stops at the first value too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_INPUT_NESTING): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: item, depth } = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const element of Object.values(item)) pending.push({ value: element, depth: depth + 1 });
  }
  return false;
}

/** Whether an issue of illFormedInput is the nesting's. */
export const isTooDeep = (issue: ValidationIssue): boolean => issue.type === TOO_DEEP;

/**
 * What no handler should see of a parsed request: strings no database can store as sent (NUL
 * characters, which Postgres refuses in text, and lone surrogates, which UTF-8 cannot encode, so
 * they would become U+FFFD), one issue per bad string or key at its path; and nesting deeper than
 * MAX_INPUT_NESTING, one issue at the first value too deep, below which nothing is walked.
 * Iterative, linear in the input: a path is a link to its parent, written out only for an issue
 * (copying it at every level made a body nested 30,000 deep cost seconds, quadratic in its depth).
 */
export function illFormedInput(value: unknown, location: 'body' | 'query' | 'path'): ValidationIssue[] {
  type Path = { parent: Path; key: string | number } | null;
  const issues: ValidationIssue[] = [];
  // `depth`: how many objects and arrays hold the value.
  const pending: { value: unknown; path: Path; depth: number }[] = [{ value, path: null, depth: 0 }];
  const written = (path: Path) => {
    const keys: (string | number)[] = [];
    for (let at = path; at; at = at.parent) keys.push(at.key);
    return keys.reverse();
  };
  const check = (text: string, path: Path) => {
    const problem = stringProblem(text);
    if (problem) issues.push({ loc: [location, ...written(path)], msg: problem, type: 'string_pattern_mismatch' });
  };
  let tooDeep = false;
  while (pending.length > 0) {
    const { value: item, path, depth } = pending.pop()!;
    if (typeof item === 'string') {
      check(item, path);
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= MAX_INPUT_NESTING) {
      if (!tooDeep) {
        issues.push({
          loc: [location, ...written(path)],
          msg: `Must not nest objects and arrays more than ${MAX_INPUT_NESTING} levels deep`,
          type: TOO_DEEP,
        });
      }
      tooDeep = true;
      continue;
    }
    if (Array.isArray(item)) {
      item.forEach((element, index) => pending.push({ value: element, path: { parent: path, key: index }, depth: depth + 1 }));
    } else {
      for (const [key, element] of Object.entries(item)) {
        const at = { parent: path, key };
        check(key, at);
        pending.push({ value: element, path: at, depth: depth + 1 });
      }
    }
  }
  return issues.reverse();
}

function stringProblem(text: string): string | undefined {
  if (text.includes('\0')) return 'Must not contain NUL (U+0000) characters';
  if (!text.isWellFormed()) return 'Must be valid Unicode: a lone surrogate (\\ud800 to \\udfff) is not a character';
  return undefined;
}

/**
 * The query string's percent-escapes, checked as UTF-8: Express decodes a bad one (`%ff`) to
 * U+FFFD without a word. One issue per parameter that does not decode.
 */
export function undecodableQuery(url: string): ValidationIssue[] {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return [];
  const issues: ValidationIssue[] = [];
  for (const pair of url.slice(queryStart + 1).split('&')) {
    const [rawKey = '', rawValue = ''] = pair.split('=', 2);
    try {
      decodeURIComponent(rawKey.replaceAll('+', ' '));
      decodeURIComponent(rawValue.replaceAll('+', ' '));
    } catch {
      issues.push({
        loc: ['query', rawKey],
        msg: 'Must be percent-encoded UTF-8: an escape such as %ff decodes to no character',
        type: 'value_error',
      });
    }
  }
  return issues;
}
