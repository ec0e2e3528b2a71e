/**
 * Loads a generated CSV of about 100 MB (1.5 million rows) through `POST /load_job/` into the
 * default DuckDB warehouse, end to end (upload, queue, read, check, load), against DuckDB's own
 * `read_csv` of the same file into the same table, in the same run; and the API process's peak
 * resident memory (VmHWM, started anew before the upload and again before the load) during the
 * upload and during the load. The server runs as its own process, built (`node dist/server.js` with
 * the image's options; the bench builds it first), and the file goes up as a plain HTTP client sends it:
 * the multipart body streamed around the file's bytes (curl -F does the same). Node's own
 * fetch with a FormData Blob takes over twice as long to encode and send 100 MB, which would be the
 * client's time, not the service's.
 *
 *   pnpm --filter collab-api bench:load-job [--rows 1500000]
 *
 * Creates a scratch database on TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432)
 * and drops it afterwards. Prints a Markdown table.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import http from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { physicalNames } from '../src/adapters/warehouse/index.js';
import { mintLocalToken } from '../src/auth/index.js';
import { createDatabaseClient } from '../src/database.js';
import { appRoot, migrationsDir } from '../src/paths.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';
import { processMemory as residentMemory, resetPeak } from '../test/process-memory.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1500000' } } });
const ROWS = Number(values.rows);
const SECRET = 'collab-api-bench-secret-0123456789abcdef';
const SCHEMA = [
  { name: 'id', type: 'INT64', mode: 'REQUIRED' },
  { name: 'customer', type: 'STRING' },
  { name: 'email', type: 'STRING' },
  { name: 'amount', type: 'FLOAT64' },
  { name: 'ordered_at', type: 'TIMESTAMP' },
  { name: 'paid', type: 'BOOL' },
  { name: 'note', type: 'STRING' },
];

const dir = await mkdtemp(path.join(os.tmpdir(), 'collab-load-bench-'));
const file = path.join(dir, 'orders.csv');
await writeCsv(file, ROWS);
const bytes = (await stat(file)).size;

const database = await createScratchDatabase({ label: 'collab_load_bench', migrationsDir });
const dataDir = path.join(dir, 'data');
const db = createDatabaseClient(database.url, 2);
try {
  await bootstrapTenant(db, { tenantName: 'Bench', adminEmail: 'admin@bench.test', adminName: 'Admin', adminSub: 'idp|bench' });
  const token = mintLocalToken({ secret: SECRET, sub: 'idp|bench' });
  execFileSync('pnpm', ['run', 'build'], { cwd: appRoot, stdio: 'ignore' });
  const service = await startService('dist/server.js', {
    built: true,
    // As infra/docker/collab-api.Dockerfile runs it.
    nodeArgs: ['--max-semi-space-size=8'],
    cwd: appRoot,
    // info: startService waits for the "listening" line; later lines are dropped.
    env: {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      COLLAB_JWT_SECRET: SECRET,
      COLLAB_JWKS_URL: undefined,
    },
    timeoutMs: 120_000,
    keepLogs: false,
  });
  const call = async (method: string, urlPath: string, body?: object) => {
    const res = await fetch(`${service.url}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown> & { id: string };
  };
  const project = await call('POST', '/api/v1/projects', { name: 'Bench' });
  const dataset = await call('POST', '/api/v1/datasets', { name: 'Bench', project_id: project.id });
  const table = await call('POST', '/api/v1/tables', { name: 'orders', schema: SCHEMA, dataset_id: dataset.id });
  const pid = service.child.pid!;
  const rssBefore = await residentMemory(pid);
  // Peaks from here on: start-up's own is not the upload's or the load's.
  await resetPeak(pid);

  const started = performance.now();
  const job = await upload(`${service.url}/load_job/`, token, { tableId: table.id, file, size: bytes });
  if (!job.id) throw new Error(`POST /load_job/ answered ${JSON.stringify(job)}`);
  const uploadedMs = performance.now() - started;
  const rssUpload = await residentMemory(pid);
  await resetPeak(pid);
  let ended = job;
  while (['Pending', 'Running'].includes(String(ended.status))) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    ended = await call('GET', `/load_job/${job.id}`);
  }
  const apiMs = performance.now() - started;
  const rss = await residentMemory(pid);
  await service.stop();
  if (ended.status !== 'Completed')
    throw new Error(`the load job ended ${String(ended.status)}: ${JSON.stringify(ended.error_details)}`);

  // DuckDB alone: the same file into the same table (emptied first), on the same warehouse file.
  const instance = await DuckDBInstance.create(path.join(dataDir, 'warehouse', 'warehouse.duckdb'));
  const connection = await instance.connect();
  const { dataset: schema, table: name } = physicalNames({ datasetId: dataset.id, tableId: table.id });
  await connection.run(`DELETE FROM ${schema}.${name}`);
  const duckStarted = performance.now();
  await connection.run(`INSERT INTO ${schema}.${name} SELECT * FROM read_csv('${file}')`);
  const duckMs = performance.now() - duckStarted;
  connection.closeSync();
  instance.closeSync();

  const rate = (ms: number) => Math.round(ROWS / (ms / 1000));
  console.log(`| ${ROWS.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(0)} MB CSV | seconds | rows/s |`);
  console.log('|---|---:|---:|');
  console.log(
    `| POST /load_job/ end to end (upload ${(uploadedMs / 1000).toFixed(1)} s) | ${(apiMs / 1000).toFixed(1)} | ${rate(apiMs).toLocaleString('en')} |`,
  );
  console.log(`| DuckDB read_csv into the same table | ${(duckMs / 1000).toFixed(1)} | ${rate(duckMs).toLocaleString('en')} |`);
  console.log(`\nRatio (API / DuckDB): ${(duckMs / apiMs).toFixed(2)}`);
  console.log(
    `API process RSS (VmRSS, VmHWM): ${mb(rssBefore.current)} MB before (start-up's peak ${mb(rssBefore.peak)} MB); peak ${mb(rssUpload.peak)} MB during the upload, ${mb(rss.peak)} MB during the load`,
  );
} finally {
  await db.$disconnect();
  await database.drop();
  await rm(dir, { recursive: true, force: true });
}

/** POST /load_job/ with the multipart body written around the file's bytes, streamed from disk. */
async function upload(
  url: string,
  token: string,
  options: { tableId: string; file: string; size: number },
): Promise<Record<string, unknown> & { id: string }> {
  const boundary = `bench-${randomUUID()}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="table_id"\r\n\r\n${options.tableId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="orders.csv"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const request = http.request(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': head.length + options.size + tail.length,
    },
  });
  const answered = once(request, 'response') as Promise<[http.IncomingMessage]>;
  request.write(head);
  await pipeline(createReadStream(options.file), request, { end: false });
  request.end(tail);
  const [response] = await answered;
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> & { id: string };
}

async function writeCsv(target: string, rows: number): Promise<void> {
  const out = createWriteStream(target);
  out.write('id,customer,email,amount,ordered_at,paid,note\n');
  let chunk = '';
  for (let i = 1; i <= rows; i++) {
    chunk += `${i},c${i % 997},u${i % 99_991}@x.io,${((i * 37) % 100_000) / 100},2026-0${1 + (i % 9)}-1${i % 10} 12:00:00,${i % 3 === 0},"a, ${i % 7}"\n`;
    if (i % 10_000 === 0) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'close');
}

function mb(value: number): string {
  return (value / 1024 / 1024).toFixed(0);
}
