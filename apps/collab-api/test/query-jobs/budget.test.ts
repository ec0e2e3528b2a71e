/**
 * One query must not take the service down: a real server process (src/server.ts) with a small
 * memory budget (256 MiB over its size at start, so that the test is harmless on a shared 2-core
 * machine) runs the memory bomb, range(1e9), and both again with their sizes coming from
 * data at run time (past the parse-tree check, into DuckDB's allocator). Each fails
 * `resourcesExceeded` with a clear message; the process stays within its budget, answers
 * meanwhile, and another tenant's job runs. A result over COLLAB_QUERY_MAX_RESULT_ROWS fails too.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { mintLocalToken } from '../../src/auth/index.js';
import { createDatabaseClient, type Database } from '../../src/database.js';
import { migrationsDir } from '../../src/paths.js';
import { bootstrapTenant } from '../../src/tenants/bootstrap.js';
import { TEST_SECRET } from '../context.js';
import { processMemory as memoryOf } from '../process-memory.js';
import { client, start } from '../service-process.js';

jest.setTimeout(300_000);

const BUDGET_MB = 256;
const MIB = 2 ** 20;

let database: ScratchDatabase;
let dataDir: string;
let db: Database;
let service: Awaited<ReturnType<typeof start>>;

/** A tenant's client, with a project to save queries in and a way to run one to its end. */
async function tenant(name: string) {
  await bootstrapTenant(db, { tenantName: name, adminEmail: `admin@${name}.test`, adminName: 'Admin', adminSub: `idp|${name}` });
  const api = client(service.url, mintLocalToken({ secret: TEST_SECRET, sub: `idp|${name}` }));
  const project = await api.call('POST', '/api/v1/projects', { name });
  const run = async (text: string): Promise<string> => {
    const saved = await api.call('POST', '/api/v1/queries', { project_id: project.body.id, query_text: text });
    const started = await api.call('POST', '/api/v1/queries/run', { query_id: saved.body.id, query_text: text });
    expect(started.status).toBe(202);
    return String(started.body.job_id);
  };
  const ended = async (jobId: string) => {
    for (;;) {
      const job = (await api.call('GET', `/api/v1/query-jobs/${jobId}`)).body;
      if (job.status !== 'PENDING' && job.status !== 'RUNNING') return job;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { api, run, ended, runToEnd: async (text: string) => ended(await run(text)) };
}

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'collab_query_budget', migrationsDir });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-query-budget-'));
  db = createDatabaseClient(database.url, 2);
  service = await start({
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    COLLAB_MEMORY_BUDGET_MB: String(BUDGET_MB),
    COLLAB_DUCKDB_MEMORY_LIMIT: '128MB',
    COLLAB_QUERY_MAX_RESULT_ROWS: '1000',
  });
}, 120_000);

afterAll(async () => {
  if (service && service.child.exitCode === null) await service.stop();
  await db.$disconnect();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it('caps the process at its size at start plus the budget', async () => {
  const limits = await readFile(`/proc/${service.child.pid}/limits`, 'utf8');
  const soft = /^Max data size\s+(\d+)\s/m.exec(limits)?.[1];
  expect(soft).toBeDefined();
  const { data } = await memoryOf(service.child.pid!);
  // Its data segment has grown a little since (the worker, pg-boss's pools): the cap is above, within the budget.
  expect(Number(soft)).toBeGreaterThan(data);
  expect(Number(soft)).toBeLessThan(data + BUDGET_MB * MIB);
});

it('fails the memory bomb and range(1e9) with resourcesExceeded, within the budget, while others are served', async () => {
  const bomber = await tenant('bomber');
  const neighbour = await tenant('neighbour');
  const before = await memoryOf(service.child.pid!);
  const bombs = {
    'the bomb': 'SELECT count(*) AS n FROM (SELECT unnest(range(100000000)) x)',
    // Written 1e9, DuckDB's printing of the checked tree refuses the DOUBLE today (invalidQuery): the integer it stands for.
    'range(1e9)': 'SELECT count(*) AS n FROM (SELECT unnest(range(1000000000)) x)',
    'the bomb, sized at run time': 'SELECT count(*) AS n FROM (SELECT unnest(range(x)) FROM (VALUES (100000000)) t(x))',
    'range(1e9), sized at run time': 'SELECT count(*) AS n FROM (SELECT unnest(range(x)) FROM (VALUES (1000000000)) t(x))',
  };
  const jobs: Record<string, string> = Object.fromEntries(
    await Promise.all(Object.entries(bombs).map(async ([name, text]) => [name, await bomber.run(text)])),
  );
  const trivial = await neighbour.run('SELECT 1 AS one');
  // Answered while the bombs run.
  expect((await fetch(`${service.url}/health`)).status).toBe(200);

  const outcomes = Object.fromEntries(
    await Promise.all(Object.entries(jobs).map(async ([name, id]) => [name, (await bomber.ended(id)).error_result])),
  );
  expect(outcomes).toEqual({
    'the bomb': {
      reason: 'resourcesExceeded',
      message: expect.stringMatching(/^range\(\.\.\.\) would build a list of 100,000,000 values from constants/),
    },
    'range(1e9)': { reason: 'resourcesExceeded', message: expect.stringMatching(/1,000,000,000 values/) },
    'the bomb, sized at run time': {
      reason: 'resourcesExceeded',
      message: expect.stringMatching(/^The query needed more memory than this service allows a query: Out of Memory Error/),
    },
    'range(1e9), sized at run time': {
      reason: 'resourcesExceeded',
      message: expect.stringMatching(/^The query needed more memory than this service allows a query: Out of Memory Error/),
    },
  });
  expect(await neighbour.ended(trivial)).toMatchObject({ status: 'DONE', total_rows: 1 });
  const after = await memoryOf(service.child.pid!);
  expect(after.peak).toBeLessThan(before.current + BUDGET_MB * MIB);
  expect((await fetch(`${service.url}/ready`)).status).toBe(200);
});

it('runs a large list within the budget, and gives its memory back', async () => {
  const lister = await tenant('lister');
  const before = await memoryOf(service.child.pid!);
  // 5 million values, 40 MB, built at run time (DuckDB's buffer pool takes its share of the budget too).
  const job = await lister.runToEnd('SELECT count(*) AS n FROM (SELECT unnest(range(x)) FROM (VALUES (5000000)) t(x))');
  expect(job).toMatchObject({ status: 'DONE', total_rows: 1, error_result: null });
  const page = await lister.api.call('GET', `/api/v1/query-jobs/${job.id}/results`);
  expect(page.body.rows).toEqual([{ data: { n: 5_000_000 } }]);
  // DuckDB's allocator gives it back (memory/allocator.ts) within a second or so: it no longer counts against the cap.
  const deadline = Date.now() + 30_000;
  while ((await memoryOf(service.child.pid!)).data >= before.data + 32 * MIB) {
    if (Date.now() > deadline) throw new Error('the list is still counted against the memory budget');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});

it('fails a result over COLLAB_QUERY_MAX_RESULT_ROWS, storing nothing, and stores one at the limit', async () => {
  const rows = await tenant('rows');
  const over = await rows.runToEnd('SELECT unnest(range(5000)) AS n');
  expect(over).toMatchObject({
    status: 'FAILED',
    total_rows: null,
    error_result: { reason: 'resourcesExceeded', message: expect.stringMatching(/more than 1,000 rows/) },
  });
  const at = await rows.runToEnd('SELECT unnest(range(1000)) AS n ORDER BY n DESC');
  expect(at).toMatchObject({ status: 'DONE', total_rows: 1000 });
  const last = await rows.api.call('GET', `/api/v1/query-jobs/${at.id}/results?page=20&page_size=50`);
  expect((last.body.rows as unknown[]).at(-1)).toEqual({ data: { n: 0 } });
});
