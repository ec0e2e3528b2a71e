/**
 * The console in a real browser (Debian's chromium driven by playwright-core): sign in with a
 * token, pick the table, upload a CSV, and see the job reach Completed through the details view's
 * 5-second refresh. Saves the screenshot the README shows (docs/console.png).
 */
import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import request from 'supertest';
import { appRoot } from '../../src/paths.js';
import { CHROMIUM_FLAGS, ensureChromium } from '../browser/chromium.js';
import { createTestContext, type TestContext } from '../context.js';
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

it('uploads a CSV and follows the job to Completed', async () => {
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
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
  }
});
