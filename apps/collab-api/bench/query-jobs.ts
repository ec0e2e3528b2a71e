/**
 * Query jobs against DuckDB run directly, in one run and one process (the app, its worker and a
 * second DuckDB handle on the same warehouse file):
 *
 * - an aggregate over a QUERY_BENCH_ROWS-row table (default 10,000,000) through the job API
 *   (run, poll until DONE) against the same SQL on DuckDB, median of 3 each, and their ratio;
 * - p95 of fetching page 1 and the last page (page 50,000 at 10 million rows, page_size 200) of the
 *   table's full stored result over HTTP;
 * - exports of min(rows, 1,000,000) rows in each format (no compression), against DuckDB's own COPY
 *   of the same rows where DuckDB writes the format.
 *
 *   QUERY_BENCH_ROWS=1000000 pnpm --filter collab-api bench:query-jobs
 *
 * Creates a scratch database (TEST_DATABASE_URL's server) and a data folder, dropped afterwards.
 * Prints a Markdown table.
 */
import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { createTestContext } from '../test/context.js';
import { seedTenant } from '../test/fixtures.js';

const ROWS = Number(process.env.QUERY_BENCH_ROWS ?? 10_000_000);
const EXPORT_ROWS = Math.min(ROWS, 1_000_000);
const PAGE_SIZE = 200;
const SAMPLES = 40;
const AGGREGATE = 'SELECT customer, count(*) AS n, sum(amount) AS total, avg(amount) AS mean FROM bench.orders GROUP BY customer';

const ctx = await createTestContext({ COLLAB_DEFAULT_DAILY_QUOTA_USD: '1000000', COLLAB_DEFAULT_MONTHLY_QUOTA_USD: '1000000' });
const scratch = await mkdtemp(path.join(os.tmpdir(), 'collab-query-bench-'));
const server: Server = ctx.app.listen(0);
await ctx.startWorker();
try {
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const tenant = await seedTenant(ctx, 'Bench');
  const call = async (method: string, urlPath: string, body?: object) => {
    const res = await fetch(`${base}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${tenant.editor.token}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (res.status >= 400) throw new Error(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown> & { id: string };
  };
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
    const text = String(query.query_text);
    const jobId = String((await call('POST', '/api/v1/queries/run', { query_id: query.id, query_text: text })).job_id);
    for (;;) {
      const job = await call('GET', `/api/v1/query-jobs/${jobId}`);
      if (job.status === 'DONE') return job;
      if (job.status !== 'PENDING' && job.status !== 'RUNNING')
        throw new Error(`job ${String(job.status)}: ${JSON.stringify(job.error_result)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;

  const direct: number[] = [];
  const api: number[] = [];
  const queued: number[] = [];
  const running: number[] = [];
  const query: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    direct.push((await timed(() => duck.runAndReadAll(AGGREGATE.replace('bench.orders', physical)))).ms);
    const saved = await saveQuery(AGGREGATE);
    const { ms, value: job } = await timed(() => runJob(saved));
    api.push(ms);
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

  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  console.log(`\nQuery jobs, ${ROWS.toLocaleString('en')} rows, DuckDB warehouse\n`);
  console.log('| measure | job API | DuckDB directly | ratio |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| aggregate (median of 3), ms | ${fmt(median(api))} | ${fmt(median(direct))} | ${fmt(median(api) / median(direct), 2)} |`,
  );
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
} finally {
  server.close();
  await ctx.close();
  await rm(scratch, { recursive: true, force: true });
}
