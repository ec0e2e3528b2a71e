/**
 * The load-job web console at /console: a static page, its stylesheet and its script (TypeScript
 * whose types are stripped once, when first asked for). Everything comes from this service, under
 * a Content-Security-Policy that lets the page load nothing else and run no inline script.
 */
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import type { Response, Router } from 'express';

const STATIC_DIR = path.join(import.meta.dirname, 'static');

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

export function consoleRoutes(router: Router): void {
  const files = {
    '/console': { name: 'index.html', type: 'text/html; charset=utf-8', load: readStatic },
    '/console/console.css': { name: 'console.css', type: 'text/css; charset=utf-8', load: readStatic },
    '/console/console.js': { name: 'console.ts', type: 'text/javascript; charset=utf-8', load: readScript },
    '/console/favicon.svg': { name: 'favicon.svg', type: 'image/svg+xml', load: readStatic },
  };
  for (const [route, file] of Object.entries(files)) {
    let content: Promise<string> | undefined;
    router.get(route, async (_req, res) => {
      content ??= file.load(file.name);
      send(res, file.type, await content);
    });
  }
}

function readStatic(name: string): Promise<string> {
  return readFile(path.join(STATIC_DIR, name), 'utf8');
}

async function readScript(name: string): Promise<string> {
  return stripTypeScriptTypes(await readStatic(name));
}

function send(res: Response, type: string, body: string): void {
  res
    .set({
      'Content-Type': type,
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(body);
}
