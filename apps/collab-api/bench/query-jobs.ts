/**
 * Query jobs against DuckDB run directly, in one run and one process (the app, its worker and a
 * second DuckDB handle on the same warehouse file), then the limits of one query in a server
 * process of its own:
 *
 * - an aggregate over a QUERY_BENCH_ROWS-row table (default 10,000,000) through the job API
 *   (run, then the first page in a request that waits for the job: `timeout_ms`) against the same
 *   SQL on DuckDB, alternated, AGGREGATE_RUNS (11) of each (the first run apart: its check and byte
 *   count are not yet known): the ratio of their medians, and the range of each pair's ratio;
 * - a trivial job end to end (run, DONE, first page), p50 and p95 of TRIVIAL_RUNS (100): with a request that waits
 *   (and where its time goes: submit, queued, running, page), with the client polling the job every
 *   5 ms, and with a new text each time (its check not known);
 * - p95 of fetching page 1 and the last page (page 50,000 at 10 million rows, page_size 200) of the
 *   table's full stored result over HTTP;
 * - exports of min(rows, 1,000,000) rows in each format (no compression), against DuckDB's own COPY
 *   of the same rows where DuckDB writes the format;
 * - scheduling (the default 2 jobs at once, 1 per tenant): 30 trivial jobs of one tenant queued at once, and another tenant's job
 *   queued behind them; another tenant's trivial job while one tenant keeps 8 heavy jobs queued;
 *   the time from a cancel to CANCELLED for a heavy job that runs;
 * - the memory budget: a server process (src/server.ts, default settings: COLLAB_MEMORY_BUDGET_MB
 *   1024) runs the memory bomb and range(1e9), written with constants and sized at run time: the
 *   time each takes to fail, and the process's RSS before, at its peak (VmHWM) and after.
 *
 *   QUERY_BENCH_ROWS=1000000 pnpm --filter collab-api bench:query-jobs
 *
 * Creates scratch databases (TEST_DATABASE_URL's server) and data folders, dropped afterwards.
 * Prints Markdown tables, and the machine's load average (os.loadavg) before and after.
 */
import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createScratchDatabase } from '@repo/db/dev';
import { scrapeMetric } from '@repo/testing';
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { mintLocalToken } from '../src/auth/index.js';
import { createDatabaseClient } from '../src/database.js';
import { migrationsDir } from '../src/paths.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';
import { createTestContext, TEST_SECRET } from '../test/context.js';
import { seedTenant } from '../test/fixtures.js';
import { processMemory, resetPeak } from '../test/process-memory.js';
import { start as startServer } from '../test/service-process.js';

const ROWS = Number(process.env.QUERY_BENCH_ROWS ?? 10_000_000);
const EXPORT_ROWS = Math.min(ROWS, 1_000_000);
const PAGE_SIZE = 200;
const SAMPLES = 40;
// A trivial job takes 20 to 35 ms here: a hundred runs steady its p50, which twenty left a few ms apart between runs.
const TRIVIAL_RUNS = 100;
// Three runs of each left the aggregate's ratio 0.2 apart between bench runs of the same code: eleven steady its median.
const AGGREGATE_RUNS = 11;
const AGGREGATE = 'SELECT customer, count(*) AS n, sum(amount) AS total, avg(amount) AS mean FROM bench.orders GROUP BY customer';
// A hundred million rows of cross join, no table: a second or so of two cores.
const HEAVY =
  'SELECT count(*) AS n FROM (SELECT unnest(range(10000)) AS a) x, (SELECT unnest(range(10000)) AS b) y WHERE a + b >= 0';
const BOMBS = {
  'the bomb: `unnest(range(100000000))`': 'SELECT count(*) AS n FROM (SELECT unnest(range(100000000)) x)',
  '`range(1000000000)`': 'SELECT count(*) AS n FROM (SELECT unnest(range(1000000000)) x)',
  'the bomb, sized at run time (`range(x)`, x = 1e8)':
    'SELECT count(*) AS n FROM (SELECT unnest(range(x)) FROM (VALUES (100000000)) t(x))',
  'range(x), x = 1e9, at run time': 'SELECT count(*) AS n FROM (SELECT unnest(range(x)) FROM (VALUES (1000000000)) t(x))',
};

console.log(
  `load average before: ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')} (1, 5, 15 min; ${os.cpus().length} cores)`,
);
const ctx = await createTestContext({ COLLAB_DEFAULT_DAILY_QUOTA_USD: '1000000', COLLAB_DEFAULT_MONTHLY_QUOTA_USD: '1000000' });
const scratch = await mkdtemp(path.join(os.tmpdir(), 'collab-query-bench-'));
const server: Server = ctx.app.listen(0);
await ctx.startWorker();
try {
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const tenant = await seedTenant(ctx, 'Bench');
  const call = caller(base, tenant.editor.token);
  const project = await call('POST', '/api/v1/projects', { name: 'Bench' });
  const dataset = await call('POST', '/api/v1/datasets', { name: 'bench', project_id: project.id });
  const schema = [
    { name: 'id', type: 'INT64' },
    { name: 'customer', type: 'STRING' },
    { name: 'amount', type: 'FLOAT64' },
    { name: 'paid', type: 'BOOL' },
  ];
  const table = await call('POST', '/api/v1/tables', { name: 'orders', schema, dataset_id: dataset.id });
  const names = physicalNames({ datasetId: dataset.id, tableId: table.id });
  const physical = `${names.dataset}.${names.table}`;
  const duck = await (await DuckDBInstance.fromCache(path.join(ctx.dataDir, 'warehouse', 'warehouse.duckdb'))).connect();
  await duck.run(
    `INSERT INTO ${physical} SELECT range, 'customer ' || (range % 1000), range * 0.25, range % 2 = 0 FROM range(${ROWS})`,
  );

  const timed = async <T>(work: () => Promise<T>) => {
    const started = performance.now();
    const value = await work();
    return { ms: performance.now() - started, value };
  };
  const saveQuery = (text: string) => call('POST', '/api/v1/queries', { query_text: text, project_id: project.id });
  /** Runs a saved query (saving it is not timed) and polls until the job is DONE. */
  const runJob = async (query: { id: string; query_text?: unknown }) => {
    const job = await ended(call, await start(call, query));
    if (job.status !== 'DONE') throw new Error(`job ${String(job.status)}: ${JSON.stringify(job.error_result)}`);
    return job;
  };

  const direct: number[] = [];
  const api: number[] = [];
  const queued: number[] = [];
  const running: number[] = [];
  const query: number[] = [];
  const aggregate = await saveQuery(AGGREGATE);
  // Its check and the byte count of the table's columns are made once, then known (the README says why).
  const cold = await timed(() => firstPage(call, aggregate));
  for (let i = 0; i < AGGREGATE_RUNS; i += 1) {
    direct.push((await timed(() => duck.runAndReadAll(AGGREGATE.replace('bench.orders', physical)))).ms);
    const { ms, value: jobId } = await timed(() => firstPage(call, aggregate));
    api.push(ms);
    const job = await call('GET', `/api/v1/query-jobs/${jobId}`);
    queued.push(Date.parse(String(job.started)) - Date.parse(String(job.created)));
    running.push(Date.parse(String(job.ended)) - Date.parse(String(job.started)));
    query.push(Number(job.total_slot_ms));
  }

  const everything = await saveQuery('SELECT * FROM bench.orders ORDER BY id');
  const full = await timed(() => runJob(everything));
  const lastPage = Math.ceil(ROWS / PAGE_SIZE);
  const pageTimes = async (page: number) => {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      times.push(
        (await timed(() => call('GET', `/api/v1/query-jobs/${full.value.id}/results?page=${page}&page_size=${PAGE_SIZE}`))).ms,
      );
    }
    return p95(times);
  };
  const firstP95 = await pageTimes(1);
  const lastP95 = await pageTimes(lastPage);

  const exportJob = await runJob(await saveQuery(`SELECT * FROM bench.orders ORDER BY id LIMIT ${EXPORT_ROWS}`));
  const exports: { format: string; seconds: number; duckdb?: number }[] = [];
  for (const format of ['CSV', 'JSON', 'PARQUET', 'AVRO']) {
    const { ms } = await timed(async () => {
      const created = await call('POST', `/api/v1/query-jobs/${exportJob.id}/exports`, { format, compression: 'NONE' });
      for (;;) {
        const row = await call('GET', `/api/v1/exports/${created.id}`);
        if (row.status === 'DONE') return;
        if (row.status === 'FAILED') throw new Error(String(row.error_message));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    const copy =
      format === 'AVRO'
        ? undefined
        : (
            await timed(() =>
              duck.run(
                `COPY (SELECT * FROM ${physical} ORDER BY id LIMIT ${EXPORT_ROWS}) TO '${path.join(scratch, `copy.${format.toLowerCase()}`)}' (FORMAT ${format.toLowerCase()})`,
              ),
            )
          ).ms;
    exports.push({ format, seconds: ms / 1000, duckdb: copy === undefined ? undefined : copy / 1000 });
  }
  duck.closeSync();
  const trivial = await trivialFigures(base, ctx);
  const scheduling = await schedulingFigures(base, ctx);

  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  console.log(`\nQuery jobs, ${ROWS.toLocaleString('en')} rows, DuckDB warehouse\n`);
  console.log('| measure | job API | DuckDB directly | ratio |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| aggregate, run to first page (median of ${AGGREGATE_RUNS}), ms | ${fmt(median(api))} | ${fmt(median(direct))} | ${fmt(median(api) / median(direct), 2)} |`,
  );
  const pairRatios = api.map((ms, i) => ms / direct[i]!).sort((a, b) => a - b);
  console.log(
    `| aggregate, each run against the DuckDB run just before it: ratio min / median / max | | | ${fmt(pairRatios[0]!, 2)} / ${fmt(median(pairRatios), 2)} / ${fmt(pairRatios.at(-1)!, 2)} |`,
  );
  console.log(`| aggregate, its first run (check and byte count made), ms | ${fmt(cold.ms)} | | |`);
  console.log(`| of which: queued until the worker started it, ms | ${fmt(median(queued))} | | |`);
  console.log(`| of which: started to DONE (check, run, store, measure, charge), ms | ${fmt(median(running))} | | |`);
  console.log(`| of which: the stored query itself (total_slot_ms), ms | ${fmt(median(query))} | | |`);
  console.log(`| full result stored (${ROWS.toLocaleString('en')} rows), ms | ${fmt(full.ms)} | | |`);
  console.log(`| page 1 (page_size ${PAGE_SIZE}), p95 of ${SAMPLES}, ms | ${fmt(firstP95)} | | |`);
  console.log(`| page ${lastPage.toLocaleString('en')}, p95 of ${SAMPLES}, ms | ${fmt(lastP95)} | | |`);
  for (const row of exports) {
    const copy = row.duckdb === undefined ? 'no writer' : `${fmt(row.duckdb, 2)} s`;
    const ratio = row.duckdb === undefined ? '' : fmt(row.seconds / row.duckdb, 2);
    console.log(
      `| export ${EXPORT_ROWS.toLocaleString('en')} rows, ${row.format}, s | ${fmt(row.seconds, 2)} s | ${copy} | ${ratio} |`,
    );
  }
  console.log(
    `\nA trivial job (\`SELECT 1 AS one\`), end to end: run, DONE, first page (${TRIVIAL_RUNS} runs after one untimed; goal: p50 15 ms)\n`,
  );
  console.log('| measure | p50 ms | p95 ms |');
  console.log('|---|---:|---:|');
  for (const [measure, times] of Object.entries(trivial.totals))
    console.log(`| ${measure} | ${fmt(median(times))} | ${fmt(p95(times))} |`);
  console.log('\nIts stages, in the request that waits (p50 of each stage apart: they need not add up to the p50 above)\n');
  console.log('| stage | p50 ms | p95 ms |');
  console.log('|---|---:|---:|');
  const stageNames: Record<keyof Stages, string> = {
    submit: 'submit: POST /api/v1/queries/run until its answer (client clock)',
    queued: "queued: the job's created → started (server clock, whole ms): commit, pick-up, start",
    running: 'running: started → ended (server clock, whole ms): catalog, check, run and store, end and charge',
    page: 'page: ended → the first page received (the waiting request woken, rows read, answer)',
  };
  for (const [stage, name] of Object.entries(stageNames)) {
    const values = trivial.stages.map((row) => row[stage as keyof Stages]);
    console.log(`| ${name} | ${fmt(median(values))} | ${fmt(p95(values))} |`);
  }
  console.log('\nScheduling (2 jobs at once, 1 per tenant), end to end (run, poll every 5 ms until it ends)\n');
  console.log('| measure | ms |');
  console.log('|---|---:|');
  for (const [measure, ms] of Object.entries(scheduling)) console.log(`| ${measure} | ${fmt(ms)} |`);
} finally {
  server.close();
  await ctx.close();
  await rm(scratch, { recursive: true, force: true });
}

await trivialInServerProcessFigures();
await memoryBudgetFigures();
console.log(
  `\nload average after: ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')}`,
);

type Call = (method: string, urlPath: string, body?: object) => Promise<Record<string, unknown> & { id: string }>;

function caller(base: string, token: string): Call {
  return async (method, urlPath, body) => {
    const res = await fetch(`${base}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (res.status >= 400) throw new Error(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown> & { id: string };
  };
}

/** Runs a saved query; the job's id. */
async function start(call: Call, query: { id: string; query_text?: unknown }): Promise<string> {
  const text = String(query.query_text);
  return String((await call('POST', '/api/v1/queries/run', { query_id: query.id, query_text: text })).job_id);
}

/** Runs a saved query and reads its first page in a request that waits for the job to end; the job's id. */
async function firstPage(call: Call, query: { id: string; query_text?: unknown }): Promise<string> {
  const jobId = await start(call, query);
  const page = await call('GET', `/api/v1/query-jobs/${jobId}/results?timeout_ms=60000`);
  if (!Array.isArray(page.rows)) throw new Error(`no page: ${JSON.stringify(page)}`);
  return jobId;
}

/** The job once it has ended, read every 5 ms. */
async function ended(call: Call, jobId: string) {
  for (;;) {
    const job = await call('GET', `/api/v1/query-jobs/${jobId}`);
    if (job.status !== 'PENDING' && job.status !== 'RUNNING') return job;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

function p95(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;
}

/** A tenant with a project, a saved query for each text, and its calls. */
async function benchTenant(base: string, context: typeof ctx, name: string, texts: string[]) {
  const call = caller(base, (await seedTenant(context, name)).editor.token);
  const project = await call('POST', '/api/v1/projects', { name });
  const queries = await Promise.all(
    texts.map((text) => call('POST', '/api/v1/queries', { query_text: text, project_id: project.id })),
  );
  return { call, queries };
}

/** Where a trivial job's time goes, per stage (ms): see the README's table printed with it. */
type Stages = { submit: number; queued: number; running: number; page: number };

/**
 * A trivial job end to end (run, DONE, first page), TRIVIAL_RUNS times after one not timed: with a request
 * that waits for the job (and its stages: the run's answer, the job's created → started → ended
 * as the server wrote them, and ended → the page received), with the client polling the job every
 * 5 ms, and a new text each time.
 */
async function trivialFigures(
  base: string,
  context: typeof ctx,
): Promise<{ totals: Record<string, number[]>; stages: Stages[] }> {
  const texts = Array.from({ length: TRIVIAL_RUNS + 1 }, (_, i) => `SELECT ${i} AS one`);
  const alone = await benchTenant(base, context, 'Alone', ['SELECT 1 AS one', ...texts]);
  const [repeated, ...fresh] = alone.queries as [(typeof alone.queries)[number], ...typeof alone.queries];
  const times = async (run: (i: number) => Promise<unknown>) => {
    await run(0);
    const measured: number[] = [];
    for (let i = 1; i <= TRIVIAL_RUNS; i += 1) {
      const started = performance.now();
      await run(i);
      measured.push(performance.now() - started);
    }
    return measured;
  };
  const stages: Stages[] = [];
  const waited = await times(async (i) => {
    const submitted = performance.now();
    const jobId = await start(alone.call, repeated);
    const answered = performance.now();
    const page = await alone.call('GET', `/api/v1/query-jobs/${jobId}/results?timeout_ms=60000`);
    const received = Date.now();
    if (!Array.isArray(page.rows)) throw new Error(`no page: ${JSON.stringify(page)}`);
    if (i === 0) return;
    // Read after the timing: the server's own times of the job (millisecond precision).
    const job = await alone.call('GET', `/api/v1/query-jobs/${jobId}`);
    const [created, started, ended] = [job.created, job.started, job.ended].map((at) => Date.parse(String(at)));
    stages.push({
      submit: answered - submitted,
      queued: started! - created!,
      running: ended! - started!,
      page: received - ended!,
    });
  });
  return {
    totals: {
      'the same query, the first page in a request that waits (`timeout_ms`)': waited,
      'the same query, polling the job every 5 ms, then the first page': await times(async () => {
        const jobId = await start(alone.call, repeated);
        await ended(alone.call, jobId);
        await alone.call('GET', `/api/v1/query-jobs/${jobId}/results`);
      }),
      'a new text each time (checked anew), in a request that waits': await times((i) => firstPage(alone.call, fresh[i]!)),
    },
    stages,
  };
}

async function schedulingFigures(base: string, context: typeof ctx): Promise<Record<string, number>> {
  const flood = await benchTenant(base, context, 'Flood', ['SELECT 1 AS one']);
  const behind = await benchTenant(base, context, 'Behind', ['SELECT 1 AS one']);
  const floodStarted = performance.now();
  const floodJobs = await Promise.all(Array.from({ length: 30 }, () => start(flood.call, flood.queries[0]!)));
  const behindStarted = performance.now();
  await ended(behind.call, await start(behind.call, behind.queries[0]!));
  const behindMs = performance.now() - behindStarted;
  for (const id of floodJobs) await ended(flood.call, id);
  const drainMs = performance.now() - floodStarted;

  const busy = await benchTenant(base, context, 'Busy', [HEAVY]);
  const quiet = await benchTenant(base, context, 'Quiet', ['SELECT 1 AS one']);
  const heavyJobs = await Promise.all(Array.from({ length: 8 }, () => start(busy.call, busy.queries[0]!)));
  const besideHeavy: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    await ended(quiet.call, await start(quiet.call, quiet.queries[0]!));
    besideHeavy.push(performance.now() - started);
  }
  // The cancel of the one that runs, then of the others (PENDING: at once).
  let cancelMs = 0;
  for (const id of heavyJobs) {
    const job = await busy.call('GET', `/api/v1/query-jobs/${id}`);
    if (job.status !== 'RUNNING') continue;
    const started = performance.now();
    await busy.call('POST', `/api/v1/query-jobs/${id}/cancel`);
    await ended(busy.call, id);
    cancelMs = performance.now() - started;
    break;
  }
  for (const id of heavyJobs) await busy.call('POST', `/api/v1/query-jobs/${id}/cancel`).catch(() => undefined);
  for (const id of heavyJobs) await ended(busy.call, id);
  return {
    "30 trivial jobs of one tenant queued at once: the last one's end": drainMs,
    "another tenant's trivial job queued behind those 30": behindMs,
    "another tenant's trivial job while one tenant keeps 8 heavy jobs queued (median of 3; goal 2,000)": median(besideHeavy),
    'a cancel of a running heavy job, until CANCELLED': cancelMs,
  };
}

/**
 * A server process of its own (src/server.ts, default settings but `env`: see test/service-process.ts)
 * on a scratch database with one tenant, whose Org admin `work` calls the API as.
 */
async function withServerProcess(
  label: string,
  env: Record<string, string>,
  work: (service: Awaited<ReturnType<typeof startServer>>, call: Call) => Promise<void>,
): Promise<void> {
  const database = await createScratchDatabase({ label, migrationsDir });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `${label}-`));
  const db = createDatabaseClient(database.url, 2);
  try {
    await bootstrapTenant(db, {
      tenantName: 'Bench',
      adminEmail: 'admin@bench.test',
      adminName: 'Admin',
      adminSub: 'idp|bench',
    });
    const service = await startServer({ DATABASE_URL: database.url, DATA_DIR: dataDir, ...env });
    try {
      await work(service, caller(service.url, mintLocalToken({ secret: TEST_SECRET, sub: 'idp|bench' })));
    } finally {
      await service.stop();
    }
  } finally {
    await db.$disconnect();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The trivial job as a client on another machine sees it: against a server process of its own,
 * so that this client's requests and answers (a few ms of CPU a job) are not run on the server's
 * event loop as they are in the one-process figures above; and the server's CPU time per job
 * (process_cpu_seconds_total: its event loop, DuckDB's and libuv's threads), steadier than the
 * time on a shared machine.
 */
async function trivialInServerProcessFigures(): Promise<void> {
  await withServerProcess(
    'collab_query_trivial_bench',
    { COLLAB_DEFAULT_DAILY_QUOTA_USD: '1000000', COLLAB_DEFAULT_MONTHLY_QUOTA_USD: '1000000' },
    async (service, call) => {
      const project = await call('POST', '/api/v1/projects', { name: 'Trivial' });
      const query = await call('POST', '/api/v1/queries', { query_text: 'SELECT 1 AS one', project_id: project.id });
      const cpuMs = async () => (await scrapeMetric(service.url, 'process_cpu_seconds_total')) * 1000;
      // Ten untimed: the process's first jobs load code and warm DuckDB.
      for (let i = 0; i < 10; i += 1) await firstPage(call, query);
      const cpuBefore = await cpuMs();
      const times: number[] = [];
      for (let i = 0; i < TRIVIAL_RUNS; i += 1) {
        const started = performance.now();
        await firstPage(call, query);
        times.push(performance.now() - started);
      }
      const cpuPerJob = ((await cpuMs()) - cpuBefore) / TRIVIAL_RUNS;
      console.log(
        `\nThe same trivial job against a server process of its own (src/server.ts, LOG_LEVEL info), in a request that waits: ` +
          `p50 ${median(times).toFixed(1)} ms, p95 ${p95(times).toFixed(1)} ms (${TRIVIAL_RUNS} runs after ten untimed); ` +
          `the server's CPU time per job ${cpuPerJob.toFixed(1)} ms`,
      );
    },
  );
}

/** The memory bomb and range(1e9) in a server process of their own with the default budget. */
async function memoryBudgetFigures(): Promise<void> {
  await withServerProcess('collab_query_budget_bench', {}, async (service, call) => {
    const project = await call('POST', '/api/v1/projects', { name: 'Bombs' });
    const pid = service.child.pid!;
    // A first job, so that the worker's and DuckDB's first allocations are behind us.
    const warm = await call('POST', '/api/v1/queries', { query_text: 'SELECT 1 AS one', project_id: project.id });
    await ended(call, await start(call, warm));
    console.log(`\nOne query's memory (server process, COLLAB_MEMORY_BUDGET_MB=1024)\n`);
    console.log('| query | outcome | ms to end | RSS before / peak / after, MB |');
    console.log('|---|---|---:|---:|');
    for (const [name, text] of Object.entries(BOMBS)) {
      const saved = await call('POST', '/api/v1/queries', { query_text: text, project_id: project.id });
      const before = await processMemory(pid);
      await resetPeak(pid);
      const started = performance.now();
      const job = await ended(call, await start(call, saved));
      const ms = performance.now() - started;
      const after = await processMemory(pid);
      const outcome = `${String(job.status)} ${String((job.error_result as { reason?: string } | null)?.reason ?? '')}`;
      const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
      console.log(
        `| ${name} | ${outcome} | ${ms.toFixed(0)} | ${mb(before.current)} / ${mb(after.peak)} / ${mb(after.current)} |`,
      );
    }
  });
}
