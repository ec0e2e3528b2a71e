/**
 * The console in a real browser (Debian's chromium driven by playwright-core): sign in with a
 * token, pick the table, upload a CSV, and see the job reach Completed through the details view's
 * 5-second refresh. Then the same pages
 * from the built server (`node dist/server.js`, as the image runs it), which serves the files the
 * build compiled into dist/.
 */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { mintLocalToken } from '../../src/auth/index.js';
import { compileScript } from '../../src/console/files.js';
import { createDatabaseClient } from '../../src/database.js';
import { appRoot, migrationsDir } from '../../src/paths.js';
import { bootstrapTenant } from '../../src/tenants/bootstrap.js';
import { ensureChromium } from '../browser/chromium.js';
import { signIn, unlabelled, withBrowser } from '../browser/page.js';
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
  for (const file of ['/console', '/console/console.css', '/console/session.js', '/console/load-jobs/load-jobs.js']) {
    const res = await request(ctx.app).get(file);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  }
  for (const script of ['/console/session.js', '/console/load-jobs/load-jobs.js']) {
    expect((await request(ctx.app).get(script)).text).not.toMatch(/: (string|number|boolean)\b[,)]/);
  }
  // The page's address while the console had other pages beside it.
  const moved = await request(ctx.app).get('/console/load-jobs');
  expect({ status: moved.status, location: moved.headers.location }).toEqual({ status: 308, location: '/console' });
});

it('uploads a CSV at /console and follows the job to Completed', async () => {
  await withBrowser(async (page, problems) => {
    await page.goto(`${baseUrl}/console`);
    // Enter in the token's field signs in.
    await page.getByLabel('Access token').fill(fixture.token);
    await page.getByLabel('Access token').press('Enter');
    await page.locator('#who').filter({ hasText: 'Signed in as' }).waitFor();
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
    expect(await unlabelled(page)).toEqual([]);
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
      ['/console/load-jobs', 'text/html; charset=utf-8'],
      ['/console/queries', 'text/html; charset=utf-8'],
      ['/console/shared-data', 'text/html; charset=utf-8'],
      ['/console/approvals/0195a6c1-0000-7000-8000-000000000000', 'text/html; charset=utf-8'],
      ['/console/session.js', 'text/javascript; charset=utf-8'],
      ['/console/load-jobs/load-jobs.js', 'text/javascript; charset=utf-8'],
      ['/console/console.css', 'text/css; charset=utf-8'],
      ['/console/favicon.svg', 'image/svg+xml'],
    ];
    for (const [file, type] of files) {
      const res = await fetch(`${service.url}${file}`);
      expect({ file, status: res.status, type: res.headers.get('content-type') }).toEqual({ file, status: 200, type });
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self';/);
    }
    for (const name of [
      'session',
      'load-jobs/load-jobs',
      'approvals/approvals',
      'approvals/kinds',
      'approvals/request',
      'queries/queries',
      'shared-data/shared-data',
    ]) {
      const script = await (await fetch(`${service.url}/console/${name}.js`)).text();
      const source = await readFile(path.join(appRoot, 'src', 'console', 'static', `${name}.ts`), 'utf8');
      expect(script).toBe(compileScript(source));
      // JavaScript that node parses as the module the page loads.
      const checked = path.join(dataDir, `${name.replace('/', '-')}.mjs`);
      await writeFile(checked, script);
      await promisify(execFile)(process.execPath, ['--check', checked]);
    }
  });

  it('runs the pages in the browser: a token signs in, with no error, and lasts while the tab does', async () => {
    await withBrowser(async (page, problems) => {
      await page.goto(`${service.url}/console`);
      await signIn(page, mintLocalToken({ secret: TEST_SECRET, sub }));
      await page.getByText('Signed in as Ada (Org admin) · ada@built.test').waitFor();
      for (const [link, heading] of [
        ['Approvals', 'Awaiting your decision'],
        ['Queries', 'Saved queries'],
        ['Shared data', 'Shared with your projects'],
        ['Load jobs', 'Load a file'],
      ]) {
        await page.getByRole('navigation').getByRole('link', { name: link }).click();
        await page.getByRole('heading', { name: heading }).waitFor();
        expect(await page.getByRole('link', { name: link, exact: true }).getAttribute('aria-current')).toBe('page');
      }
      expect(problems).toEqual([]);
    });
  });
});
