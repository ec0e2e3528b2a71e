/**
 * The console's files, apart from any page: which path names which file (and which none), scripts
 * compiled from TypeScript, and nothing remembered between requests, a missing file least of all.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { compileScript, consoleFileName, servedName } from '../../src/console/files.js';
import { consoleRoutes } from '../../src/console/routes.js';

describe('consoleFileName', () => {
  it.each<[string[], string | undefined]>([
    [[], 'index.html'],
    [['approvals'], 'approvals/index.html'],
    [['console.js'], 'console.js'],
    [['console.css'], 'console.css'],
    [['favicon.svg'], 'favicon.svg'],
    [['approvals', 'approvals.js'], 'approvals/approvals.js'],
    [['approvals', '0195a6c1-0000-7000-8000-000000000000'], 'approvals/request.html'],
    [['approvals', 'not-an-id'], 'approvals/request.html'],
    [['approvals', 'request.html'], 'approvals/request.html'],
    [['queries', '0195a6c1-0000-7000-8000-000000000000'], 'queries/0195a6c1-0000-7000-8000-000000000000/index.html'],
    [['approvals', 'x', 'y'], 'approvals/x/y/index.html'],
    [['approvals', '..'], undefined],
    [['console.ts'], undefined],
    [['tsconfig.json'], undefined],
    [['..', 'routes.js'], undefined],
    [['.hidden.css'], undefined],
    [['a', '', 'b.css'], undefined],
    [['..%2f..%2fpackage.json'], undefined],
    [['x\u0000.css'], undefined],
  ])('%j names %j', (segments, name) => {
    expect(consoleFileName(segments)).toBe(name);
  });
});

describe('servedName', () => {
  it.each<[string, string | undefined]>([
    ['console.ts', 'console.js'],
    ['pages/approvals.ts', 'pages/approvals.js'],
    ['index.html', 'index.html'],
    ['favicon.svg', 'favicon.svg'],
    ['tsconfig.json', undefined],
    ['notes.md', undefined],
  ])('%s is served as %j', (source, served) => {
    expect(servedName(source)).toBe(served);
  });
});

describe('the console routes on a folder', () => {
  let dir: string;
  let app: express.Express;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'collab-console-'));
    const router = express.Router();
    consoleRoutes(router, { dir });
    app = express().use(router);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('answers 404 while a file is missing, and serves it once it is there (a failed read is not remembered)', async () => {
    expect((await request(app).get('/console')).status).toBe(404);
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>Console</title>');
    const page = await request(app).get('/console');
    expect({ status: page.status, type: page.headers['content-type'], text: page.text }).toEqual({
      status: 200,
      type: 'text/html; charset=utf-8',
      text: '<!doctype html><title>Console</title>',
    });
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self';/);
  });

  it('serves a script from its TypeScript, compiled, and the built JavaScript where there is one', async () => {
    const source = 'const answer: number = 42;\nexport function double(value: number): number {\n  return value * answer;\n}\n';
    await writeFile(path.join(dir, 'page.ts'), source);
    const compiled = await request(app).get('/console/page.js');
    expect({ status: compiled.status, type: compiled.headers['content-type'] }).toEqual({
      status: 200,
      type: 'text/javascript; charset=utf-8',
    });
    expect(compiled.text).toBe(compileScript(source));
    expect(compiled.text).not.toMatch(/: number/);
    await writeFile(path.join(dir, 'page.js'), 'export const built = true;\n');
    expect((await request(app).get('/console/page.js')).text).toBe('export const built = true;\n');
    // The source itself is never served.
    expect((await request(app).get('/console/page.ts')).status).toBe(404);
  });

  it("serves a page folder's index.html, and nothing outside the folder or of another kind", async () => {
    await mkdir(path.join(dir, 'approvals'));
    await writeFile(path.join(dir, 'approvals', 'index.html'), 'approvals');
    await writeFile(path.join(dir, 'tsconfig.json'), '{}');
    await writeFile(path.join(dir, '.secret.css'), 'x');
    expect((await request(app).get('/console/approvals')).text).toBe('approvals');
    for (const url of [
      '/console/tsconfig.json',
      '/console/.secret.css',
      '/console/..%2f..%2fetc%2fpasswd',
      '/console/%2e%2e/package.json',
      '/console/missing.css',
      '/console/approvals/missing',
      // A path through a file (ENOTDIR), and a name past the file system's limit (ENAMETOOLONG): no file either.
      '/console/approvals/index.html/x',
      '/console/tsconfig.json/x.css',
      `/console/${'a'.repeat(300)}`,
      `/console/${'a'.repeat(300)}.css`,
    ]) {
      expect({ url, status: (await request(app).get(url)).status }).toEqual({ url, status: 404 });
    }
  });

  it('sends an address with a trailing slash to the page without it, and a moved page to its address, keeping the query', async () => {
    for (const [url, location] of [
      ['/console/', '/console'],
      ['/console/approvals/', '/console/approvals'],
      ['/console/approvals/7d341454-6141-4f25-b4b0-91e5fb311117//', '/console/approvals/7d341454-6141-4f25-b4b0-91e5fb311117'],
      ['/console/queries/?project=p&job=j', '/console/queries?project=p&job=j'],
      // The load-job page's address before it became /console itself.
      ['/console/load-jobs', '/console'],
      ['/console/load-jobs/?table=t', '/console?table=t'],
    ]) {
      const answer = await request(app).get(url!);
      expect({ url, status: answer.status, location: answer.headers.location }).toEqual({ url, status: 308, location });
    }
    // Never elsewhere: an address that names no page is not one.
    for (const url of ['/console/..//evil.example/', '/console//evil.example/', '/console/%2e%2e/x/', '/console/.git/']) {
      const answer = await request(app).get(url);
      expect({ url, status: answer.status, location: answer.headers.location }).toEqual({
        url,
        status: 404,
        location: undefined,
      });
    }
  });
});
