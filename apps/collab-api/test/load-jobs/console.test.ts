/**
 * The console in a real browser (Debian's chromium driven by playwright-core): sign in with a
 * token, pick the table, upload a CSV, and see the job reach Completed through the details view's
 * 5-second refresh. Saves the screenshot the README shows (docs/console.png). Then the same pages
 * from the built server (`node dist/server.js`, as the image runs it), which serves the files the
 * build compiled into dist/.
 */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import request from 'supertest';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { mintLocalToken } from '../../src/auth/index.js';
import { compileScript } from '../../src/console/files.js';
import { createDatabaseClient } from '../../src/database.js';
import { appRoot, migrationsDir } from '../../src/paths.js';
import { bootstrapTenant } from '../../src/tenants/bootstrap.js';
import { CHROMIUM_FLAGS, ensureChromium } from '../browser/chromium.js';
import { createTestContext, TEST_SECRET, type TestContext } from '../context.js';
import { start } from '../service-process.js';
import { loadFixture, type LoadFixture } from './helpers.js';

jest.setTimeout(180_000);

let ctx: TestContext;
let fixture: LoadFixture;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  ensureChromium();
  ctx = await createTestContext();
  await ctx.startWorker();
  fixture = await loadFixture(ctx, 'Acme Analytics');
  await fixture.table(
    [
      { name: 'order_id', type: 'INT64', mode: 'REQUIRED' },
      { name: 'customer', type: 'STRING' },
      { name: 'amount', type: 'NUMERIC' },
    ],
    'orders',
  );
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await ctx.close();
});

it('serves the console under a strict Content-Security-Policy, from this service alone', async () => {
  for (const file of ['/console', '/console/console.css', '/console/console.js']) {
    const res = await request(ctx.app).get(file);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  }
  expect((await request(ctx.app).get('/console/console.js')).text).not.toMatch(/: (string|number|boolean)\b[,)]/);
});

/** A page of a fresh chromium, the errors it reports (scripts, CSP, failed loads) gathered in `problems`. */
async function withBrowser(use: (page: Page, problems: string[]) => Promise<void>): Promise<void> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'collab-console-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: ensureChromium(),
    args: CHROMIUM_FLAGS,
    viewport: { width: 1100, height: 900 },
  });
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await use(page, problems);
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
  }
}

it('uploads a CSV and follows the job to Completed', async () => {
  await withBrowser(async (page, problems) => {
    await page.goto(`${baseUrl}/console`);
    await page.getByLabel('Access token').fill(fixture.token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByLabel('Table', { exact: true }).locator('option', { hasText: 'orders' }).waitFor({ state: 'attached' });
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'orders.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        'order_id,customer,amount\n1001,Ada Lovelace,120.50\n1002,Grace Hopper,99.99\n1003,"Hopper, Grace",15\n',
      ),
    });
    await page.getByRole('button', { name: 'Upload and load' }).click();
    const status = page.locator('#job-fields .status');
    await status.filter({ hasText: /Running|Pending|Completed/ }).waitFor();
    // The details view reads the job again every 5 seconds until it ends.
    await page.locator('#job-fields .status-Completed').waitFor({ timeout: 30_000 });
    await page.getByText('Last read').waitFor();
    await page.locator('#jobs .status-Completed').first().waitFor();
    expect(await page.locator('#job-fields').textContent()).toContain('3');
    expect(problems).toEqual([]);
    await page.screenshot({ path: path.join(appRoot, 'docs', 'console.png') });
  });
});

describe('the built server (node dist/server.js, as the image runs it)', () => {
  let database: ScratchDatabase;
  let dataDir: string;
  let service: Awaited<ReturnType<typeof start>>;
  const sub = 'idp|console-built';

  beforeAll(async () => {
    // The build but its `prisma generate`: the tests already run on that client, and generating it
    // again would rewrite the files that other test files are loading.
    await promisify(execFile)('pnpm', ['run', 'build:dist'], { cwd: appRoot, maxBuffer: 16 * 1024 * 1024 });
    database = await createScratchDatabase({ label: 'collab_console_built', migrationsDir });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-console-built-'));
    const db = createDatabaseClient(database.url, 1);
    await bootstrapTenant(db, { tenantName: 'Built', adminEmail: 'ada@built.test', adminName: 'Ada', adminSub: sub });
    await db.$disconnect();
    service = await start({ DATABASE_URL: database.url, DATA_DIR: dataDir }, { built: true });
  }, 600_000);
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the page and its script, stylesheet and icon (200), the script compiled by the build', async () => {
    const files: [string, string][] = [
      ['/console', 'text/html; charset=utf-8'],
      ['/console/console.js', 'text/javascript; charset=utf-8'],
      ['/console/console.css', 'text/css; charset=utf-8'],
      ['/console/favicon.svg', 'image/svg+xml'],
    ];
    for (const [file, type] of files) {
      const res = await fetch(`${service.url}${file}`);
      expect({ file, status: res.status, type: res.headers.get('content-type') }).toEqual({ file, status: 200, type });
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self';/);
    }
    const script = await (await fetch(`${service.url}/console/console.js`)).text();
    const source = await readFile(path.join(appRoot, 'src', 'console', 'static', 'console.ts'), 'utf8');
    expect(script).toBe(compileScript(source));
    // JavaScript that node parses as the module the page loads.
    const checked = path.join(dataDir, 'console.mjs');
    await writeFile(checked, script);
    await promisify(execFile)(process.execPath, ['--check', checked]);
  });

  it('runs the page in the browser: a token signs in, with no error', async () => {
    await withBrowser(async (page, problems) => {
      await page.goto(`${service.url}/console`);
      await page.getByLabel('Access token').fill(mintLocalToken({ secret: TEST_SECRET, sub }));
      await page.getByRole('button', { name: 'Use token' }).click();
      await page.getByText('Ada · ada@built.test').waitFor();
      expect(problems).toEqual([]);
    });
  });
});
