/**
 * Screenshots of every console page at 1280×900 (and at 375 px wide, named `-375`), for a person to
 * look at: `pnpm --filter ./apps/collab-api console:shots`. Runs the app from sources on a scratch
 * database (TEST_DATABASE_URL's server, default postgresql://postgres@127.0.0.1:5432) with a worker
 * and the DuckDB warehouse, makes two tenants through the public API (a consumer and an owner who
 * shares a dataset with a private column, through approved requests; one request left pending), runs
 * a query and exports its result, then drives Debian's chromium through the pages. Writes the PNGs
 * to console-shots/ (git-ignored) as whole pages, and a 1280×900 view of a query's job, result and
 * exports to docs/console.png, the README's image.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { appRoot } from '../src/paths.js';
import { freePort, listen, signIn, withBrowser } from '../test/browser/page.js';
import { createTestContext } from '../test/context.js';
import { seedTenant, type TenantFixture } from '../test/fixtures.js';
import { openWarehouseCatalog } from '../test/warehouse-catalog.js';

const OUT = path.join(appRoot, 'console-shots');

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const ctx = await createTestContext({ PUBLIC_BASE_URL: base });
await ctx.startWorker();
const server = await listen(ctx.app, port);

/** A call of the public API as `token`'s user; throws on anything but 2xx. */
async function call<T>(token: string, method: string, route: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

const id = async (token: string, route: string, body: object) => (await call<{ id: string }>(token, 'POST', route, body)).id;

async function fill(datasetId: string, tableId: string, sql: string): Promise<void> {
  const { dataset, table } = physicalNames({ datasetId, tableId });
  const catalog = await openWarehouseCatalog(ctx.dataDir);
  try {
    await catalog.run(sql.replaceAll('{table}', `${dataset}.${table}`));
  } finally {
    catalog.close();
  }
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error('still waiting after 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function named(tenant: TenantFixture, name: string): Promise<void> {
  await ctx.db.user.update({ where: { id: tenant.admin.id }, data: { name } });
}

try {
  const acme = await seedTenant(ctx, 'Acme Analytics');
  const northwind = await seedTenant(ctx, 'Northwind Health');
  await named(acme, 'Ada Lovelace');
  await named(northwind, 'Grace Hopper');
  await ctx.db.user.update({ where: { id: acme.editor.id }, data: { name: 'Edsger Dijkstra' } });

  // Acme's project and its own orders.
  const project = await id(acme.editor.token, '/api/v1/projects', { name: 'Q4 forecast' });
  const sales = await id(acme.editor.token, '/api/v1/datasets', { name: 'sales', project_id: project });
  const orders = await id(acme.editor.token, '/api/v1/tables', {
    name: 'orders',
    dataset_id: sales,
    schema: [
      { name: 'person', type: 'STRING' },
      { name: 'amount', type: 'NUMERIC' },
    ],
  });
  await fill(sales, orders, "INSERT INTO {table} VALUES ('ada', 120.5), ('bob', 99.99), ('cy', 15)");

  // Northwind's patients, with a private column, shared into Acme's project through approvals.
  const patients = await id(northwind.admin.token, '/api/v1/projects', { name: 'Patients' });
  const hr = await id(northwind.admin.token, '/api/v1/datasets', { name: 'hr', project_id: patients });
  const people = await id(northwind.admin.token, '/api/v1/tables', {
    name: 'people',
    dataset_id: hr,
    schema: [
      { name: 'name', type: 'STRING' },
      { name: 'salary', type: 'INT64', private: true },
      { name: 'team', type: 'STRING' },
    ],
  });
  await fill(hr, people, "INSERT INTO {table} VALUES ('ada', 100, 'data'), ('bob', 200, 'ops'), ('cy', 300, 'data')");
  const invitation = await id(acme.editor.token, '/api/v1/approval/project-tenant', {
    project_id: project,
    tenant_id: northwind.id,
  });
  await call(northwind.admin.token, 'POST', `/api/v1/approval/${invitation}/approve`);
  const sharing = await id(acme.editor.token, '/api/v1/approval/project-dataset', { project_id: project, dataset_id: hr });
  await call(northwind.admin.token, 'POST', `/api/v1/approval/${sharing}/reject`, {
    rejection_reason: 'Ask again once the data-sharing agreement is signed',
  });
  const shared = await id(acme.editor.token, '/api/v1/approval/project-dataset', { project_id: project, dataset_id: hr });
  await call(northwind.admin.token, 'POST', `/api/v1/approval/${shared}/approve`);
  // One left pending, for the approvals pages.
  const pilot = await id(acme.editor.token, '/api/v1/projects', { name: 'Readmission pilot' });
  const pending = await id(acme.editor.token, '/api/v1/approval/project-tenant', { project_id: pilot, tenant_id: northwind.id });

  // A saved query over the shared data, run, and its result exported.
  const text =
    'SELECT p.name, p.salary, p.team, o.amount\nFROM hr.people p JOIN sales.orders o ON o.person = p.name\nORDER BY p.name';
  const query = await id(acme.editor.token, '/api/v1/queries', {
    project_id: project,
    query_text: text,
    name: 'Spend by team member',
    description: "Joins Northwind's people (salary masked) to our orders",
  });
  await id(acme.editor.token, '/api/v1/queries', {
    project_id: project,
    query_text: 'SELECT team, count(*) AS people FROM hr.people GROUP BY team',
    name: 'Team sizes',
  });
  const { job_id } = await call<{ job_id: string }>(acme.editor.token, 'POST', '/api/v1/queries/run', {
    query_id: query,
    query_text: text,
  });
  await until(
    () => call<{ status: string }>(acme.editor.token, 'GET', `/api/v1/query-jobs/${job_id}`),
    (job) => !['PENDING', 'RUNNING'].includes(job.status),
  );
  const exported = await id(acme.editor.token, `/api/v1/query-jobs/${job_id}/exports`, { format: 'CSV', compression: 'NONE' });
  await until(
    () => call<{ status: string }>(acme.editor.token, 'GET', `/api/v1/exports/${exported}`),
    (each) => each.status === 'DONE',
  );

  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const shots: [string, string, string | undefined, (page: Page) => Promise<void>][] = [
    ['sign-in', '/console', undefined, (page) => page.getByLabel('Access token').waitFor()],
    ['approvals', '/console/approvals', northwind.admin.token, (page) => page.locator('#pending tbody tr').waitFor()],
    [
      'approval-request',
      `/console/approvals/${pending}`,
      northwind.admin.token,
      (page) => page.getByRole('button', { name: 'Approve' }).waitFor(),
    ],
    ['my-requests', '/console/approvals', acme.editor.token, (page) => page.locator('#mine tbody tr').nth(3).waitFor()],
    [
      'queries',
      `/console/queries?project=${project}&query=${query}&job=${job_id}`,
      acme.admin.token,
      (page) => page.getByRole('link', { name: 'Download csv' }).waitFor(),
    ],
    ['shared-data', '/console/shared-data', acme.editor.token, (page) => page.getByText('Table people').waitFor()],
    ['access-log', '/console/shared-data', northwind.admin.token, (page) => page.locator('#access-log tbody tr').waitFor()],
    ['load-jobs', '/console', acme.editor.token, (page) => page.locator('#columns').getByText('Columns').waitFor()],
  ];
  for (const width of [1280, 375]) {
    for (const [name, route, token, ready] of shots) {
      await withBrowser(
        async (page, problems) => {
          await page.goto(`${base}${route}`);
          if (token) await signIn(page, token);
          await ready(page);
          const file = path.join(OUT, `${name}${width === 1280 ? '' : `-${width}`}.png`);
          await page.screenshot({ path: file, fullPage: true });
          if (name === 'queries' && width === 1280) {
            // The README's image: the run's job, its result and its exports, in one 1280×900 view.
            await page.evaluate('document.getElementById("job").scrollIntoView()');
            await page.screenshot({ path: path.join(appRoot, 'docs', 'console.png') });
          }
          if (problems.length) throw new Error(`${name}: ${problems.join('; ')}`);
          console.log(path.relative(appRoot, file));
        },
        { width, height: 900 },
      );
    }
  }
  console.log('docs/console.png');
} finally {
  await new Promise((resolve) => server.close(resolve));
  await ctx.close();
}
