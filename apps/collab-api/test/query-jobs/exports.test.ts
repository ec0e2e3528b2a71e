import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import request from 'supertest';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant } from '../fixtures.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';
import {
  avroRows,
  downloadExport,
  exportJob,
  queryFixture,
  type QueryFixture,
  runToEnd,
  shareDataset,
  ORDER_COLUMNS,
} from './helpers.js';

let ctx: TestContext;
let owner: QueryFixture;
let folder: string;
let jobId: string;
let expected: Record<string, unknown>[];

const TEXT =
  'SELECT o.id, o.label, o.amount, o.ok, p.salary, p.name FROM sales.orders o LEFT JOIN hr.people p ON p.name = o.label ORDER BY o.id';

beforeAll(async () => {
  // Over the reuse margin (a minute): a URL is handed out again while more than a minute of it is left.
  ctx = await createTestContext({ COLLAB_EXPORT_URL_TTL_SECONDS: '600' });
  await ctx.startWorker();
  folder = await mkdtemp(path.join(os.tmpdir(), 'collab-export-test-'));
  owner = await queryFixture(ctx, 'Exporter', 'sales');
  const orders = await owner.table('orders', ORDER_COLUMNS);
  await owner.fill(
    orders,
    `INSERT INTO {table} VALUES (1, 'ada', 1.5, true), (2, 'comma, "quote"' || chr(10) || 'line', -2.25, false),
       (3, 'ünïcode ✓', NULL, NULL), (9007199254740993, NULL, 0, true)`,
  );
  const sharer = await queryFixture(ctx, 'Payroll', 'hr');
  const people = await sharer.table('people', [
    { name: 'name', type: 'STRING' },
    { name: 'salary', type: 'INT64', private: true },
  ]);
  await sharer.fill(people, "INSERT INTO {table} VALUES ('ada', 100)");
  await shareDataset(ctx, { owner, sharer });
  const job = await runToEnd(ctx, owner, owner.tenant, TEXT);
  expect(job.status).toBe('DONE');
  jobId = job.id;
  expected = (await owner.api.get(`/api/v1/query-jobs/${jobId}/results`)).body.rows.map((row: { data: object }) => row.data);
}, 60_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await ctx?.close();
});

/** The file's rows as DuckDB (CSV, JSON, Parquet) or avsc (Avro) reads them. */
async function readBack(format: string, compression: string, bytes: Buffer): Promise<Record<string, unknown>[]> {
  if (format === 'AVRO') {
    const file = path.join(folder, `${format}-${compression}.avro`);
    await writeFile(file, bytes);
    const { codec, rows } = await avroRows(file, { bigLongs: true });
    // Avro's deflate codec unless NONE.
    expect(codec).toBe(compression === 'NONE' ? 'null' : 'deflate');
    return rows;
  }
  const plain = (format === 'CSV' || format === 'JSON') && compression === 'DEFLATE' ? inflateSync(bytes) : bytes;
  const gz = (format === 'CSV' || format === 'JSON') && compression === 'GZIP';
  const file = path.join(folder, `${format}-${compression}.${format.toLowerCase()}${gz ? '.gz' : ''}`);
  await writeFile(file, plain);
  const reader = {
    CSV: `read_csv('${file}', header = true, columns = {'id': 'BIGINT', 'label': 'VARCHAR', 'amount': 'DOUBLE', 'ok': 'BOOLEAN', 'salary': 'BIGINT', 'name': 'VARCHAR'})`,
    JSON: `read_json('${file}', format = 'newline_delimited', columns = {'id': 'BIGINT', 'label': 'VARCHAR', 'amount': 'DOUBLE', 'ok': 'BOOLEAN', 'salary': 'BIGINT', 'name': 'VARCHAR'})`,
    PARQUET: `read_parquet('${file}')`,
  }[format]!;
  const duck = await DuckDBInstance.create(':memory:');
  const connection = await duck.connect();
  try {
    return (await connection.runAndReadAll(`SELECT * FROM ${reader}`)).getRowObjectsJS();
  } finally {
    connection.closeSync();
    duck.closeSync();
  }
}

/** Values as the result page shows them (BIGINT as numbers where they fit, else strings). */
function comparable(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => {
      if (typeof value === 'bigint') return [key, Number.isSafeInteger(Number(value)) ? Number(value) : String(value)];
      return [key, value];
    }),
  );
}

describe('exports', () => {
  const combinations = ['CSV', 'JSON', 'AVRO', 'PARQUET'].flatMap((format) =>
    ['GZIP', 'DEFLATE', 'NONE'].map((compression): [string, string] => [format, compression]),
  );

  it.each(combinations)('%s with %s is read back row for row, masked columns still null', async (format, compression) => {
    const done = await exportJob(ctx, owner, jobId, format, compression);
    expect(done).toMatchObject({ status: 'DONE', error_message: null, storage_path: expect.stringMatching(/^query-exports\//) });
    const bytes = await downloadExport(ctx, owner, done.id);
    const rows = (await readBack(format, compression, bytes)).map(comparable);
    expect(rows).toEqual(expected.map(comparable));
    expect(rows[0]).toMatchObject({ id: 1, name: 'ada', salary: null });
  });

  it('takes CSV with GZIP by default, and lists the job’s exports', async () => {
    const created = await owner.api.post(`/api/v1/query-jobs/${jobId}/exports`, {});
    expect(created.body).toMatchObject({ format: 'CSV', compression: 'GZIP' });
    const list = await owner.api.get(`/api/v1/query-jobs/${jobId}/exports`);
    expect(list.body.exports.map((e: { id: string }) => e.id)).toContain(created.body.id);
    const all = list.body.exports.length as number;
    expect((await owner.api.get(`/api/v1/query-jobs/${jobId}/exports?skip=${all - 1}&limit=5`)).body.exports).toEqual([
      expect.objectContaining({ id: created.body.id }),
    ]);
    expect((await owner.api.get(`/api/v1/query-jobs/${jobId}/exports?limit=0`)).status).toBe(422);
    const job = await owner.api.get(`/api/v1/query-jobs/${jobId}`);
    expect(job.body.exports.map((e: { id: string }) => e.id)).toContain(created.body.id);
  });

  it('refuses bad input, other tenants and jobs that are not DONE', async () => {
    for (const body of [{ format: 'ORC' }, { compression: 'ZSTD' }, { format: 'csv' }, { format: 1 }, { format: 'CSV', x: 1 }]) {
      expect({ body, status: (await owner.api.post(`/api/v1/query-jobs/${jobId}/exports`, body)).status }).toEqual({
        body,
        status: 422,
      });
    }
    const failed = await runToEnd(ctx, owner, owner.tenant, 'SELECT * FROM nowhere.nothing');
    expect((await owner.api.post(`/api/v1/query-jobs/${failed.id}/exports`, {})).status).toBe(409);
    const done = await exportJob(ctx, owner, jobId, 'CSV', 'NONE');
    const stranger = as(ctx.app, (await seedTenant(ctx, 'Stranger')).admin.token);
    expect((await stranger.post(`/api/v1/query-jobs/${jobId}/exports`, {})).status).toBe(404);
    expect((await stranger.get(`/api/v1/query-jobs/${jobId}/exports`)).status).toBe(404);
    expect((await stranger.get(`/api/v1/exports/${done.id}`)).status).toBe(404);
    expect((await stranger.get(`/api/v1/exports/${done.id}/download-url`)).status).toBe(404);
  });

  it('fails an export whose stored result is gone, naming no warehouse object', async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT 1 AS one');
    const catalog = await openWarehouseCatalog(ctx.dataDir);
    try {
      await catalog.run(`DROP TABLE collab_results.r_${String(job.id).replaceAll('-', '_')}`);
    } finally {
      catalog.close();
    }
    const created = await owner.api.post(`/api/v1/query-jobs/${job.id}/exports`, { format: 'PARQUET' });
    let row = created.body;
    while (['PENDING', 'RUNNING'].includes(row.status)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      row = (await owner.api.get(`/api/v1/exports/${created.body.id}`)).body;
    }
    expect(row).toMatchObject({ status: 'FAILED', storage_path: null, error_message: expect.stringContaining('<result>') });
    expect(row.error_message).not.toMatch(/r_[0-9a-f]{8}|\/tmp\//);
    expect((await owner.api.get(`/api/v1/exports/${created.body.id}/download-url`)).status).toBe(409);
  });

  it('hands out the same download URL while it works, a new one once it has expired; links are checked', async () => {
    const done = await exportJob(ctx, owner, jobId, 'JSON', 'NONE');
    const first = (await owner.api.get(`/api/v1/exports/${done.id}/download-url`)).body;
    expect(Date.parse(first.expires_at)).toBeGreaterThan(Date.now());
    // Over a second later, the same URL: a new one would carry a later `expires`.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await owner.api.get(`/api/v1/exports/${done.id}/download-url`)).body).toEqual(first);
    expect((await owner.api.get(`/api/v1/exports/${done.id}`)).body).toMatchObject({
      signed_url: first.url,
      expires_at: first.expires_at,
    });
    await ctx.db.queryExport.update({
      where: { id: done.id },
      data: { signedUrl: 'http://127.0.0.1/expired', signedExpiresAt: new Date(Date.now() - 1000) },
    });
    const second = (await owner.api.get(`/api/v1/exports/${done.id}/download-url`)).body;
    expect(second.url).not.toBe('http://127.0.0.1/expired');
    expect(Date.parse(second.expires_at)).toBeGreaterThan(Date.now());
    const url = new URL(second.url);
    const tampered = new URLSearchParams(url.search);
    tampered.set('token', `${tampered.get('token')!.slice(0, -2)}AA`);
    expect((await request(ctx.app).get(`${url.pathname}?${tampered.toString()}`)).status).toBe(403);
    const expired = new URLSearchParams(url.search);
    expired.set('expires', '1000');
    expect((await request(ctx.app).get(`${url.pathname}?${expired.toString()}`)).status).toBe(403);
    // Without its query, no credential: refused as a wrong one is.
    expect((await request(ctx.app).get(url.pathname)).status).toBe(403);
  });
});
