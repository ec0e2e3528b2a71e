import { isUtf8 } from 'node:buffer';
import { INVALID_UTF8, type ValidationIssue } from '@repo/errors';

/**
 * express.json's `verify`: a body that is not valid UTF-8 is refused, where the JSON decoder would
 * silently store U+FFFD in place of each bad byte.
 */
export function requireUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('Request body is not valid UTF-8'), { type: INVALID_UTF8 });
}

/**
 * Strings of a parsed request that no database can store as sent: NUL characters (Postgres
 * refuses them in text) and lone surrogates (which UTF-8 cannot encode, so they would become
 * U+FFFD). One issue per bad string or key, at its path. Iterative, linear in the input: a path
 * is a link to its parent, written out only for an issue (copying it at every level made a body
 * nested 30,000 deep cost seconds, quadratic in its depth).
 */
export function illFormedStrings(value: unknown, location: 'body' | 'query' | 'path'): ValidationIssue[] {
  type Path = { parent: Path; key: string | number } | null;
  const issues: ValidationIssue[] = [];
  const pending: { value: unknown; path: Path }[] = [{ value, path: null }];
  const written = (path: Path) => {
    const keys: (string | number)[] = [];
    for (let at = path; at; at = at.parent) keys.push(at.key);
    return keys.reverse();
  };
  const check = (text: string, path: Path) => {
    const problem = stringProblem(text);
    if (problem) issues.push({ loc: [location, ...written(path)], msg: problem, type: 'string_pattern_mismatch' });
  };
  while (pending.length > 0) {
    const { value: item, path } = pending.pop()!;
    if (typeof item === 'string') check(item, path);
    else if (Array.isArray(item))
      item.forEach((element, index) => pending.push({ value: element, path: { parent: path, key: index } }));
    else if (typeof item === 'object' && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        const at = { parent: path, key };
        check(key, at);
        pending.push({ value: element, path: at });
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
