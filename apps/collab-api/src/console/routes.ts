/**
 * The web console at /console: the files of one folder (console/static beside this module: built,
 * dist/console/static with its scripts compiled; from sources, src/console/static, a script
 * compiled when asked for), read at every request, so that nothing, a missing file least of all,
 * is remembered. Everything comes from this service, under a Content-Security-Policy that lets a
 * page load nothing else and run no inline script.
 */
import path from 'node:path';
import type { Router } from 'express';
import { CONSOLE_CONTENT_TYPES, consoleAddress, consoleFileName, readConsoleFile } from './files.js';

export const CONSOLE_DIR = path.join(import.meta.dirname, 'static');

// fetch and XMLHttpRequest go to this origin only (the API); forms are sent by script, never navigated.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** `/console` (its index.html) and every servable file below it; `dir` is the folder (tests give another). */
export function consoleRoutes(router: Router, options: { dir: string } = { dir: CONSOLE_DIR }): void {
  router.get('/console{/*file}', async (req, res, next) => {
    const { file } = req.params as { file?: string[] };
    const query = req.originalUrl.indexOf('?');
    const moved = consoleAddress(file ?? [], req.originalUrl.slice(0, query === -1 ? undefined : query).endsWith('/'));
    if (moved !== undefined) {
      res.redirect(308, moved + (query === -1 ? '' : req.originalUrl.slice(query)));
      return;
    }
    const name = consoleFileName(file ?? []);
    const content = name === undefined ? undefined : await readConsoleFile(options.dir, name);
    if (name === undefined || content === undefined) {
      next();
      return;
    }
    res
      .set({
        'Content-Type': CONSOLE_CONTENT_TYPES[path.extname(name)],
        'Content-Security-Policy': CONTENT_SECURITY_POLICY,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      })
      .send(content);
  });
}
