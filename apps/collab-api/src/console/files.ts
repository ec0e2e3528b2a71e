/**
 * The console's files: a folder of pages (HTML), stylesheets, images and scripts written in
 * TypeScript, which the browser gets as JavaScript with the types stripped. The build writes the
 * folder out compiled (scripts/build-console.ts); from sources, a script is compiled when asked for.
 * Pure but for the reads of `readConsoleFile`.
 */
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';

/** What the console serves, by extension; any other file of the folder (its tsconfig.json) is not served. */
export const CONSOLE_CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// A name of a file or folder: no dot files, so never `.` or `..`.
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * Pages whose last segment is a record's id (the links in e-mails): the folder's page that shows
 * one record, which reads the id from the address.
 */
const RECORD_PAGES: Readonly<Record<string, string>> = {
  approvals: 'approvals/request.html',
};

/**
 * The file under the console's folder that a path below /console names: the page `index.html` for
 * /console itself and for a folder (`approvals` → `approvals/index.html`), a record's page for
 * `approvals/<id>`; undefined for a path that names no servable file (another extension, a dot
 * file, `..`).
 */
export function consoleFileName(segments: readonly string[]): string | undefined {
  if (!segments.every((segment) => SEGMENT.test(segment))) return undefined;
  const last = segments.at(-1);
  const recordPage = segments.length === 2 && Object.hasOwn(RECORD_PAGES, segments[0]!) ? RECORD_PAGES[segments[0]!] : undefined;
  if (recordPage !== undefined && last !== undefined && path.extname(last) === '') return recordPage;
  if (last === undefined || path.extname(last) === '') return [...segments, 'index.html'].join('/');
  return Object.hasOwn(CONSOLE_CONTENT_TYPES, path.extname(last)) ? segments.join('/') : undefined;
}

/** Pages at another address now: the load-job page is /console itself, as it was before the console had other pages. */
const MOVED_PAGES: Readonly<Record<string, string>> = {
  'load-jobs': '/console',
};

/**
 * Where a path below /console that is not a page's own address sends the browser (undefined: it is
 * one, or names nothing): a moved page to its address, and a path with a trailing slash
 * (`/console/approvals/`) to the page without it, where a record's page reads its id. The address
 * is made of checked segments, never of the request's text.
 */
export function consoleAddress(segments: readonly string[], trailingSlash: boolean): string | undefined {
  const named = [...segments];
  while (named.at(-1) === '') named.pop();
  if (named.length === 1 && Object.hasOwn(MOVED_PAGES, named[0]!)) return MOVED_PAGES[named[0]!];
  if (!trailingSlash || consoleFileName(named) === undefined) return undefined;
  return ['/console', ...named].join('/');
}

/** The name a file of the sources is served under: a TypeScript script's JavaScript; the others' own. */
export function servedName(sourceName: string): string | undefined {
  const served = sourceName.endsWith('.ts') ? `${sourceName.slice(0, -'.ts'.length)}.js` : sourceName;
  return Object.hasOwn(CONSOLE_CONTENT_TYPES, path.extname(served)) ? served : undefined;
}

/** A script as the browser gets it: its types stripped (static/tsconfig.json allows only erasable syntax). */
export function compileScript(source: string): string {
  return stripTypeScriptTypes(source);
}

/**
 * The content of the file `name` (from consoleFileName) in `dir`: the file itself (the built
 * folder), or for a script the TypeScript source it is compiled from (the sources' folder).
 * Undefined when neither exists; other failures throw.
 */
export async function readConsoleFile(dir: string, name: string): Promise<Buffer | string | undefined> {
  const file = await readIfExists(path.join(dir, name));
  if (file !== undefined || !name.endsWith('.js')) return file;
  const source = await readIfExists(path.join(dir, `${name.slice(0, -'.js'.length)}.ts`));
  return source === undefined ? undefined : compileScript(source.toString('utf8'));
}

/**
 * Errors that mean "no such file" for a name the URL chose: missing, a folder, a path through a
 * file (`console.css/x`), a name longer than the file system allows.
 */
const NOT_A_FILE = new Set(['ENOENT', 'EISDIR', 'ENOTDIR', 'ENAMETOOLONG']);

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if (NOT_A_FILE.has((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
}
