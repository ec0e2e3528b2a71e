import { BadRequestError } from '@repo/errors';

// GCS's limit, applied to every backend so that keys stay portable between them.
const MAX_KEY_BYTES = 1024;

/**
 * Checks an object key and answers it unchanged. Keys are relative,
 * `/`-separated paths: no leading `/`, no empty segment (`a//b`, trailing `/`), no backslash,
 * no NUL or other control character, and no segment starting with a dot (which rules out `.`
 * and `..`, and keeps the local backend's temporary folder out of reach). The same key then
 * names the same object on disk and in a bucket, and can never step outside the local root.
 */
export function checkKey(key: string): string {
  const problem = keyProblem(key);
  if (problem) throw new BadRequestError(`Invalid object key: ${problem}`, { key: key.slice(0, 200) });
  return key;
}

/** A checked key's path segments. */
export function keySegments(key: string): string[] {
  return checkKey(key).split('/');
}

function keyProblem(key: string): string | undefined {
  if (key === '') return 'it is empty';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `it is longer than ${MAX_KEY_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'it contains a control character';
  if (key.includes('\\')) return 'it contains a backslash';
  if (key.startsWith('/')) return 'it is an absolute path';
  const segments = key.split('/');
  if (segments.some((segment) => segment === '')) return 'it has an empty segment';
  if (segments.some((segment) => segment.startsWith('.'))) return 'a segment starts with a dot';
  return undefined;
}

/**
 * A folder prefix as given to `deletePrefix` (a valid key, optionally followed by one `/`),
 * answered without the trailing `/`.
 */
export function checkPrefix(prefix: string): string {
  return checkKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}
