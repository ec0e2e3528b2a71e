/**
 * The queries page in Debian's chromium, on the DuckDB warehouse with a worker: a consumer writes a
 * query over a dataset another tenant shares, dry-runs it (bytes, cost, the rules it obeys), runs
 * it and reads the result with the private column marked masked; exports a result and downloads
 * the file through its link; cancels a running job; an Org admin sees the quota. Saved names with
 * markup show as text; every control is labelled; the page fits 375 px. Then the shared-data page:
 * the consumer's shared datasets with their columns, and the owner's access log, newest first.
 */
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { freePort, listen, overflows, signIn, unlabelled, withBrowser } from '../browser/page.js';
import { ensureChromium } from '../browser/chromium.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { ownerAndSharer, type QueryFixture, runToEnd, shareDataset } from '../query-jobs/helpers.js';

jest.setTimeout(240_000);

// Four billion rows over the table's ten: minutes of work, unless it is stopped.
const HEAVY =
  'SELECT sum(n) AS total FROM sales.nums, (SELECT unnest(range(20000)) AS a) x, (SELECT unnest(range(20000)) AS b) y WHERE a + b >= 0';

let ctx: TestContext;
let server: Server;
let baseUrl: string;
let owner: QueryFixture;
let sharer: QueryFixture;

beforeAll(async () => {
  ensureChromium();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  ctx = await createTestContext({ PUBLIC_BASE_URL: baseUrl });
  await ctx.startWorker();
  ({ owner, sharer } = await ownerAndSharer(ctx, {
    orders: "INSERT INTO {table} VALUES ('ada', 0.5), ('bob', 0.25), ('cy', 0.75)",
    people: "INSERT INTO {table} VALUES ('ada', 100, 'x'), ('bob', NULL, 'y'), ('cy', 300, 'x')",
  }));
  await shareDataset(ctx, { owner, sharer });
  const nums = await owner.table('nums', [{ name: 'n', type: 'INT64' }]);
  await owner.fill(nums, 'INSERT INTO {table} SELECT range FROM range(10)');
  server = await listen(ctx.app, port);
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await ctx?.close();
});

const queriesPage = () => `${baseUrl}/console/queries?project=${owner.projectId}`;

/** Opens the queries page signed in as the owner's Dataset editor, and writes a new query (not saved yet). */
async function writeNewQuery(page: Page, query: { name?: string; sql: string }): Promise<void> {
  await page.goto(queriesPage());
  await signIn(page, owner.tenant.editor.token);
  await page.getByRole('button', { name: 'New query' }).click();
  if (query.name !== undefined) await page.getByRole('textbox', { name: 'Name', exact: true }).fill(query.name);
  await page.getByLabel(/^SQL/).fill(query.sql);
}

/** Waits for the shown job to end, and expects it DONE: a job that ends otherwise fails with its fields (why), not a timeout. */
async function expectJobDone(page: Page, timeout = 60_000): Promise<void> {
  await page.locator('#job-fields .status', { hasText: /DONE|FAILED|CANCELLED/ }).waitFor({ timeout });
  const fields = await page.locator('#job-fields').textContent();
  expect(fields).toContain('✓ DONE');
}

it("runs a consumer's query over shared data: dry run, job, result with the masked column marked", async () => {
  await withBrowser(async (page, problems) => {
    await writeNewQuery(page, { name: '<i>People</i> by team', sql: 'SELECT name, salary, team FROM hr.people ORDER BY name' });
    await page.getByLabel('Description').fill('Shared by Sharer');
    await page.getByRole('button', { name: 'Dry run' }).click();
    const dry = page.locator('#dry-run-fields');
    await dry.getByText('Estimated cost').waitFor();
    expect(await dry.textContent()).toMatch(/\$0\.\d{6}/);
    expect(await dry.textContent()).toContain('hr.people: salary masked (join only)');
    // Saved, with its name as text.
    await page.getByRole('cell', { name: '<i>People</i> by team', exact: true }).waitFor();
    expect(await page.locator('#queries i').count()).toBe(0);

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expectJobDone(page);
    const header = page.locator('#result-rows thead th');
    await header.nth(2).waitFor();
    expect(await header.allTextContents()).toEqual(['nameSTRING', 'salarymaskedINT64', 'teamSTRING']);
    const cells = await page.locator('#result-rows tbody tr').allTextContents();
    expect(cells).toEqual(['adamaskedx', 'bobmaskedy', 'cymaskedx']);
    expect(await page.locator('#results-note').textContent()).toContain(
      "Masked: salary comes from another tenant's private column",
    );
    expect(await unlabelled(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

it("exports a result and downloads the file through the link; another format's link is there too", async () => {
  await withBrowser(async (page, problems) => {
    await writeNewQuery(page, { sql: 'SELECT person, margin FROM sales.orders ORDER BY person' });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expectJobDone(page);
    await page.getByLabel('Format').selectOption('CSV');
    await page.getByLabel('Compression').selectOption('NONE');
    await page.getByRole('button', { name: 'Export' }).click();
    const link = page.getByRole('link', { name: 'Download csv' });
    await link.waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const file = await readFile(await download.path(), 'utf8');
    expect(file.trim().split('\n')).toEqual(['person,margin', 'ada,0.5', 'bob,0.25', 'cy,0.75']);

    await page.getByLabel('Format').selectOption('PARQUET');
    await page.getByLabel('Compression').selectOption('GZIP');
    await page.getByRole('button', { name: 'Export' }).click();
    await page.getByRole('link', { name: 'Download parquet' }).waitFor({ timeout: 60_000 });
    const [parquet] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download parquet' }).click(),
    ]);
    expect((await readFile(await parquet.path())).subarray(0, 4).toString()).toBe('PAR1');
    expect(problems).toEqual([]);
  });
});

it('changes a saved query, its text and name, and runs the new text', async () => {
  await withBrowser(async (page, problems) => {
    await writeNewQuery(page, { name: 'Margins', sql: 'SELECT person, margin FROM sales.orders ORDER BY person' });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('#result-rows tbody tr').first().filter({ hasText: /^ada/ }).waitFor({ timeout: 60_000 });

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Margins, highest first');
    await page.getByLabel(/^SQL/).fill('SELECT person, margin FROM sales.orders ORDER BY margin DESC');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('#result-rows tbody tr').first().filter({ hasText: /^cy/ }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#result-rows tbody tr').allTextContents()).toEqual(['cy0.75', 'ada0.5', 'bob0.25']);
    // The same saved query, changed: not a second one.
    await page.getByRole('cell', { name: 'Margins, highest first', exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'Margins', exact: true }).count()).toBe(0);
    const saved = (await as(ctx.app, owner.tenant.editor.token).get(`/api/v1/queries?project_id=${owner.projectId}`)).body;
    const margins = (saved.queries as { name: string | null; query_text: string }[]).filter((query) =>
      query.name?.startsWith('Margins'),
    );
    expect(margins).toEqual([
      expect.objectContaining({
        name: 'Margins, highest first',
        query_text: 'SELECT person, margin FROM sales.orders ORDER BY margin DESC',
      }),
    ]);
    expect(problems).toEqual([]);
  });
});

it('keeps reading a running job through failed reads, and cancels it from the page', async () => {
  await withBrowser(async (page, problems) => {
    await writeNewQuery(page, { name: 'Heavy', sql: HEAVY });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('#job-fields .status', { hasText: 'RUNNING' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#job-refresh').textContent()).toContain('every second while it is RUNNING');

    // Two reads fail as a restarting service's would (503); the page reports them and reads on.
    let failed = 0;
    await page.route('**/api/v1/query-jobs/*', (route) =>
      failed < 2 ? ((failed += 1), route.fulfill({ status: 503, json: { detail: 'Restarting' } })) : route.continue(),
    );
    await page.waitForResponse((response) => /\/api\/v1\/query-jobs\/[^/]+$/.test(response.url()) && response.status() === 200, {
      timeout: 30_000,
    });
    expect(failed).toBe(2);
    await page.unroute('**/api/v1/query-jobs/*');
    await page.getByRole('button', { name: 'Cancel job' }).click();
    await page.locator('#job-fields .status', { hasText: 'CANCELLED' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#job-fields').textContent()).toContain('stopped: The job was cancelled');
    expect(await page.getByRole('button', { name: 'Cancel job' }).isHidden()).toBe(true);
    expect(await page.locator('#results').isHidden()).toBe(true);
    expect(problems.filter((problem) => !problem.startsWith('503 GET'))).toEqual([]);
  });
});

it('shows an Org admin the quota used today and this month, reopens a query from the address, and fits 375 px', async () => {
  await withBrowser(
    async (page, problems) => {
      await page.goto(queriesPage());
      await signIn(page, owner.tenant.admin.token);
      const quota = page.locator('#quota-fields');
      await quota.getByText('Used this month').waitFor();
      expect(await quota.textContent()).toMatch(/Used today\$\d+\.\d{6} of \$\d+\.\d{6} \(\d+\.\d %\)/);
      await page.getByRole('button', { name: 'Open <i>People</i> by team' }).click();
      await expectJobDone(page, 30_000);
      await page.locator('#result-rows tbody tr').nth(2).waitFor();
      expect(page.url()).toMatch(/query=[0-9a-f-]{36}&job=[0-9a-f-]{36}$/);
      await page.reload();
      await page.locator('#result-rows tbody tr').nth(2).waitFor();
      expect(await page.getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe('<i>People</i> by team');
      expect(await overflows(page)).toEqual([]);
      expect(await unlabelled(page)).toEqual([]);
      expect(problems).toEqual([]);
    },
    { width: 375, height: 800 },
  );
});

it("shows the consumer the shared datasets' schemas, and the owner who used them, newest first", async () => {
  const newest = 'SELECT team, count(*) AS n FROM hr.people GROUP BY team /* <b>newest</b> */';
  expect((await runToEnd(ctx, owner, owner.tenant, newest)).status).toBe('DONE');
  await withBrowser(async (page, problems) => {
    await page.goto(`${baseUrl}/console/shared-data`);
    await signIn(page, owner.tenant.editor.token);
    await page.getByRole('combobox', { name: /^Project/ }).selectOption(owner.projectId);
    const dataset = page.locator('#shared article', { hasText: 'hr' });
    await dataset.getByText('Table people').waitFor();
    expect(await dataset.locator('tbody tr').allTextContents()).toEqual([
      'nameSTRINGNULLABLEYes',
      'salaryINT64NULLABLENomasked (join key only)',
      'teamSTRINGNULLABLEYes',
    ]);
    // The consumer's own dataset is not among those shared with it; the access log is for Org admins.
    expect(await page.locator('#shared h3').allTextContents()).toEqual(['hr']);
    expect(await page.locator('#owner').isHidden()).toBe(true);
    await page.getByText("Only Org admins see who used the tenant's datasets.").waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, sharer.tenant.admin.token);
    await page.getByRole('combobox', { name: /^Your dataset/ }).selectOption(sharer.datasetId);
    const log = page.locator('#access-log tbody tr');
    await log.nth(1).waitFor();
    const texts = await log.allTextContents();
    expect(texts).toHaveLength(2);
    expect(texts[0]).toContain(newest);
    expect(await page.locator('#access-log b').count()).toBe(0);
    expect(texts[1]).toContain('SELECT name, salary, team FROM hr.people ORDER BY name');
    expect(texts[1]).toContain(owner.tenant.editor.email);
    expect(texts[1]).toContain('Owner');
    expect(texts[1]).toContain('✓ DONE');
    expect(texts[1]).toContain('hr.people: salary masked');
    expect(await page.locator('#log-page').textContent()).toBe('Page 1 of 1 (2 jobs)');
    expect(await unlabelled(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
