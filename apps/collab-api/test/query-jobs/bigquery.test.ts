/**
 * Query jobs and exports on the BigQuery warehouse: the app (real engine, real GCS adapter) against
 * loopback servers that speak BigQuery's REST API (test/warehouse/fake-bigquery.ts, which runs the
 * SQL in DuckDB) and Cloud Storage's JSON API (packages/storage/test/fake-gcs.ts).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { type FakeGcs, startFakeGcs } from '../../../../packages/storage/test/fake-gcs.js';
import { physicalNames } from '../../src/adapters/warehouse/index.js';
import { openBigQueryQueryEngine } from '../../src/adapters/warehouse/query/bigquery.js';
import { QueryFailure } from '../../src/adapters/warehouse/query/index.js';
import { deleteExpiredResults } from '../../src/query-jobs/expiry.js';
import { readableCatalog } from '../../src/query-jobs/readable.js';
import { createTestContext, type TestContext } from '../context.js';
import { load } from '../load-jobs/helpers.js';
import { type FakeBigQuery, startFakeBigQuery } from '../warehouse/fake-bigquery.js';
import { avroRows, finished, queryFixture, type QueryFixture, runToEnd, shareDataset, ORDER_COLUMNS } from './helpers.js';

jest.setTimeout(60_000);

const PROJECT = 'collab-query-test';
const BUCKET = 'collab-exports';
const API = `/bigquery/v2/projects/${PROJECT}`;
const CLIENT_EMAIL = 'collab@collab-query-test.iam.gserviceaccount.com';

let gcs: FakeGcs;
let bigquery: FakeBigQuery;
let ctx: TestContext;
let owner: QueryFixture;
let sharer: QueryFixture;
let folder: string;

beforeAll(async () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  gcs = await startFakeGcs({ bucket: BUCKET, clientEmail: CLIENT_EMAIL, publicKey });
  bigquery = await startFakeBigQuery(PROJECT, { bucket: { name: BUCKET, objects: gcs.objects } });
  ctx = await createTestContext({
    COLLAB_WAREHOUSE: 'bigquery',
    COLLAB_BIGQUERY_PROJECT: PROJECT,
    COLLAB_BIGQUERY_LOCATION: 'EU',
    COLLAB_BIGQUERY_API_ENDPOINT: bigquery.url,
    COLLAB_BIGQUERY_CREDENTIALS: 'none',
    STORAGE_BACKEND: 'gcs',
    GCS_BUCKET: BUCKET,
    GCS_API_ENDPOINT: gcs.url,
    GCS_CREDENTIALS_JSON: JSON.stringify({
      type: 'service_account',
      client_email: CLIENT_EMAIL,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    }),
  });
  await ctx.startWorker();
  folder = await mkdtemp(path.join(os.tmpdir(), 'collab-bigquery-query-'));
  owner = await queryFixture(ctx, 'Owner', 'sales');
  const orders = await owner.table('orders', ORDER_COLUMNS);
  await fill(owner, orders, "INSERT INTO {table} SELECT range, 'label ' || range, range * 1.5, range % 2 = 0 FROM range(1, 21)");
  sharer = await queryFixture(ctx, 'Sharer', 'hr');
  const people = await sharer.table('people', [
    { name: 'name', type: 'STRING' },
    { name: 'salary', type: 'INT64', private: true },
    { name: 'team', type: 'STRING' },
  ]);
  await fill(sharer, people, "INSERT INTO {table} VALUES ('ada', 100, 'x'), ('bob', NULL, 'y'), ('cy', 300, 'x')");
  await shareDataset(ctx, { owner, sharer });
});

afterAll(async () => {
  await ctx?.close();
  await bigquery?.close();
  await gcs?.close();
  await rm(folder, { recursive: true, force: true });
});

async function fill(fixture: QueryFixture, tableId: string, statement: string) {
  const { dataset, table } = physicalNames({ datasetId: fixture.datasetId, tableId });
  await bigquery.fill(dataset, table, statement);
}

interface JobInsert {
  jobReference: { projectId: string; location: string; jobId?: string };
  configuration: Record<string, unknown>;
}

function jobInserts() {
  return bigquery.requests.filter((r) => r.method === 'POST' && r.path === `${API}/jobs`).map((r) => r.body as JobInsert);
}

async function results(jobId: string, page = 1, pageSize = 50) {
  const res = await owner.api.get(`/api/v1/query-jobs/${jobId}/results?page=${page}&page_size=${pageSize}`);
  expect(res.status).toBe(200);
  return res.body;
}

const NO_PHYSICAL_NAME = /ds_[0-9a-f]{8}_|t_[0-9a-f]{8}_|collab-query-test/;

describe('running on BigQuery', () => {
  let jobId: string;

  it('checks with a dry run, runs a query job into collab_results, and records its statistics', async () => {
    bigquery.requests.length = 0;
    const text = 'SELECT id, label, amount, ok FROM sales.orders ORDER BY id';
    const job = await runToEnd(ctx, owner, owner.tenant, text);
    jobId = job.id;
    expect(job).toMatchObject({
      status: 'DONE',
      error_result: null,
      total_rows: 20,
      // 20 rows of 4 columns, 8 bytes a value (the fake's measure); BigQuery bills the table's 10 MB minimum.
      total_bytes_processed: 640,
      total_bytes_billed: 10 * 2 ** 20,
      total_slot_ms: expect.any(Number),
      cache_hit: false,
      num_dml_affected_rows: null,
      private_row_count: 0,
      dml_stats: null,
      session_info: null,
      destination_table: { project_id: PROJECT, dataset_id: 'collab_results', table_id: `r_${jobId.replaceAll('-', '_')}` },
      query_plan: [expect.objectContaining({ name: 'S00: Output' })],
      timeline: [expect.objectContaining({ completedUnits: '1' })],
    });
    expect(JSON.stringify(job)).not.toMatch(/ds_[0-9a-f]{8}_/);
    const { dataset, table } = physicalNames({
      datasetId: owner.datasetId,
      tableId: (await owner.api.get('/api/v1/tables')).body.tables[0].id,
    });
    const physical = `\`${PROJECT}.${dataset}.${table}\``;
    const [dryRun, run] = jobInserts();
    expect(dryRun).toEqual({
      jobReference: { projectId: PROJECT, location: 'EU' },
      configuration: {
        dryRun: true,
        query: { query: `SELECT id, label, amount, ok FROM ${physical} ORDER BY id`, useLegacySql: false },
      },
    });
    expect(run).toEqual({
      jobReference: { projectId: PROJECT, location: 'EU', jobId: `collab_query_${jobId.replaceAll('-', '_')}` },
      configuration: {
        query: {
          query: `SELECT id, label, amount, ok FROM ${physical} ORDER BY id`,
          useLegacySql: false,
          destinationTable: { projectId: PROJECT, datasetId: 'collab_results', tableId: `r_${jobId.replaceAll('-', '_')}` },
          writeDisposition: 'WRITE_TRUNCATE',
          createDisposition: 'CREATE_IF_NEEDED',
        },
      },
    });
    expect(bigquery.datasets.get('collab_results')).toMatchObject({ location: 'EU' });
    const cost = await ctx.db.queryCost.findFirst({ where: { queryJobId: jobId } });
    expect(cost?.bytesProcessed).toBe(640n);
  });

  it('reads pages with tabledata.list from their first row: first, middle, last and beyond', async () => {
    bigquery.requests.length = 0;
    const first = await results(jobId, 1, 8);
    expect(first).toMatchObject({ columns: ['id', 'label', 'amount', 'ok'], total_rows: 20, total_pages: 3, page: 1 });
    expect(first.column_privacy).toEqual({ id: 'public', label: 'public', amount: 'public', ok: 'public' });
    expect(first.rows.map((row: { data: { id: number } }) => row.data.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(first.rows[1].data).toEqual({ id: 2, label: 'label 2', amount: 3, ok: true });
    const middle = await results(jobId, 2, 8);
    expect(middle.rows.map((row: { data: { id: number } }) => row.data.id)).toEqual([9, 10, 11, 12, 13, 14, 15, 16]);
    const last = await results(jobId, 3, 8);
    expect(last.rows.map((row: { data: { id: number } }) => row.data.id)).toEqual([17, 18, 19, 20]);
    expect((await results(jobId, 4, 8)).rows).toEqual([]);
    const reads = bigquery.requests.filter((r) => r.path.endsWith('/data'));
    // Each page starts at its own first row (the fake answers at most 7 rows a call, so 8 take two).
    expect(reads.map((r) => [r.query.startIndex, r.query.maxResults])).toEqual([
      ['0', '8'],
      ['7', '1'],
      ['8', '8'],
      ['15', '1'],
      ['16', '4'],
    ]);
    expect(reads[0]?.path).toBe(`${API}/datasets/collab_results/tables/r_${jobId.replaceAll('-', '_')}/data`);
  });

  describe('exports', () => {
    async function exported(format: string, compression: string) {
      const created = await owner.api.post(`/api/v1/query-jobs/${jobId}/exports`, { format, compression });
      expect(created.status).toBe(202);
      for (;;) {
        const res = await owner.api.get(`/api/v1/exports/${created.body.id}`);
        if (!['PENDING', 'RUNNING'].includes(res.body.status)) return res.body;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    async function readBack(format: string, compression: string, data: Buffer): Promise<Record<string, unknown>[]> {
      if (format === 'AVRO') {
        const file = path.join(folder, `${compression}.avro`);
        await writeFile(file, data);
        const { codec, rows } = await avroRows(file);
        expect(codec).toBe(compression === 'NONE' ? 'null' : 'deflate');
        return rows;
      }
      const plain = compression === 'GZIP' && format !== 'PARQUET' ? gunzipSync(data) : data;
      const file = path.join(folder, `${format}-${compression}`);
      await writeFile(file, plain);
      const reader = {
        CSV: `read_csv('${file}', header = true)`,
        JSON: `read_json('${file}', format = 'newline_delimited')`,
        PARQUET: `read_parquet('${file}')`,
      }[format];
      const duck = await DuckDBInstance.create(':memory:');
      const connection = await duck.connect();
      try {
        return (await connection.runAndReadAll(`SELECT id, label, amount, ok FROM ${reader}`)).getRowObjectsJS();
      } finally {
        connection.closeSync();
        duck.closeSync();
      }
    }

    it.each([
      ['CSV', 'GZIP'],
      ['CSV', 'NONE'],
      ['JSON', 'GZIP'],
      ['JSON', 'NONE'],
      ['AVRO', 'DEFLATE'],
      ['AVRO', 'NONE'],
      ['PARQUET', 'GZIP'],
      ['PARQUET', 'NONE'],
    ])('%s with %s: an extract job writes the object into the bucket, row for row', async (format, compression) => {
      bigquery.requests.length = 0;
      const done = await exported(format, compression);
      expect(done).toMatchObject({
        status: 'DONE',
        error_message: null,
        storage_path: expect.stringMatching(/^query-exports\//),
      });
      const [extract] = jobInserts();
      expect(extract?.configuration).toEqual({
        extract: {
          sourceTable: { projectId: PROJECT, datasetId: 'collab_results', tableId: `r_${jobId.replaceAll('-', '_')}` },
          destinationUris: [`gs://${BUCKET}/${done.storage_path}`],
          destinationFormat: format === 'JSON' ? 'NEWLINE_DELIMITED_JSON' : format,
          compression,
          ...(format === 'CSV' ? { printHeader: true } : {}),
          ...(format === 'AVRO' ? { useAvroLogicalTypes: true } : {}),
        },
      });
      const rows = await readBack(format, compression, await ctx.deps.storage.get(done.storage_path));
      expect(rows.map((row) => ({ ...row, id: Number(row.id) }))).toEqual(
        Array.from({ length: 20 }, (_, i) => ({
          id: i + 1,
          label: `label ${i + 1}`,
          amount: (i + 1) * 1.5,
          ok: (i + 1) % 2 === 0,
        })),
      );
      const link = await owner.api.get(`/api/v1/exports/${done.id}/download-url`);
      expect(link.body.url).toContain(encodeURIComponent(done.storage_path).replaceAll('%2F', '/'));
    });

    it.each([
      ['CSV', 'DEFLATE', 'BigQuery cannot export CSV with DEFLATE compression: choose GZIP or NONE'],
      ['AVRO', 'GZIP', 'BigQuery cannot export AVRO with GZIP compression: choose DEFLATE or NONE'],
    ])('fails %s with %s with a clear message, starting no job', async (format, compression, message) => {
      bigquery.requests.length = 0;
      expect(await exported(format, compression)).toMatchObject({ status: 'FAILED', error_message: message, storage_path: null });
      expect(jobInserts()).toEqual([]);
    });

    it('fails without Cloud Storage, which BigQuery writes exports into', async () => {
      const engine = await openBigQueryQueryEngine({
        projectId: PROJECT,
        location: 'EU',
        apiEndpoint: bigquery.url,
        credentials: 'none',
      });
      try {
        await expect(
          engine.exportResult(jobId, [], { format: 'CSV', compression: 'GZIP', file: '/unused', key: 'k' }),
        ).rejects.toEqual(
          new QueryFailure(
            'unsupported',
            'On the BigQuery warehouse, BigQuery writes exports into Cloud Storage itself: run with STORAGE_BACKEND=gcs',
          ),
        );
      } finally {
        await engine.close();
      }
    });
  });
});

describe('checks', () => {
  it.each([
    [
      "another tenant's table",
      'SELECT * FROM hr.people_elsewhere',
      'Table "hr.people_elsewhere" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'a table outside the catalog',
      'SELECT * FROM sales.nope',
      'Table "sales.nope" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'a stored result',
      'SELECT * FROM collab_results.r_x',
      'Table "collab_results.r_x" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'a multi-statement script',
      'SELECT 1; SELECT * FROM sales.orders',
      'A query is exactly one SELECT statement: scripts and several statements are refused',
    ],
    [
      'a non-SELECT statement (the dry run says INSERT)',
      'INSERT INTO sales.orders (id) VALUES (99)',
      'Only a SELECT may run: this is a INSERT statement',
    ],
  ])('refuses %s, naming no physical name, running nothing', async (_name, text, message) => {
    const before = bigquery.executed.length;
    const job = await runToEnd(ctx, owner, owner.tenant, text);
    expect(job).toMatchObject({ status: 'FAILED', error_result: { reason: 'accessDenied', message } });
    expect(JSON.stringify(job)).not.toMatch(NO_PHYSICAL_NAME);
    expect(bigquery.executed.length).toBe(before);
  });

  it("refuses a table of another tenant's project by its app name", async () => {
    const stranger = await queryFixture(ctx, 'Stranger', 'secret');
    await stranger.table('data', [{ name: 'value', type: 'STRING' }]);
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT * FROM secret.data');
    expect(job.error_result).toEqual({
      reason: 'accessDenied',
      message: 'Table "secret.data" is not one this query\'s project may read (or does not exist)',
    });
  });

  it("fails a query BigQuery's dry run refuses as invalidQuery, with the caller's table names", async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT nope FROM sales.orders');
    expect(job.error_result.reason).toBe('invalidQuery');
    expect(JSON.stringify(job)).not.toMatch(NO_PHYSICAL_NAME);
  });
});

describe('privacy on BigQuery', () => {
  it("nulls a shared dataset's private column at the source of the stored result, counting the rows it hid", async () => {
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT name, salary, upper(name) AS loud, team FROM hr.people ORDER BY name',
    );
    expect(job).toMatchObject({ status: 'DONE', total_rows: 3, private_row_count: 2, suppressed_row_count: 0 });
    const page = await results(job.id);
    expect(page.column_privacy).toEqual({ name: 'public', salary: 'private', loud: 'public', team: 'public' });
    expect(page.rows.map((row: { data: object }) => row.data)).toEqual([
      { name: 'ada', salary: null, loud: 'ADA', team: 'x' },
      { name: 'bob', salary: null, loud: 'BOB', team: 'y' },
      { name: 'cy', salary: null, loud: 'CY', team: 'x' },
    ]);
    // The stored table never held a salary, and its row flag is gone once counted.
    const stored = bigquery.tables.get(`collab_results.r_${String(job.id).replaceAll('-', '_')}`)!;
    expect(stored.schema.fields.map((field) => field.name)).toEqual(['name', 'salary', 'loud', 'team']);
    const [main] = bigquery.executed.filter((sql) => sql.includes('_collab_masked_row') && sql.includes('UNION ALL')).slice(-1);
    expect(main).toMatch(/^SELECT c0 AS `name`, CAST\(NULL AS INT64\) AS `salary`, c2 AS `loud`, c3 AS `team`/);
  });

  it('refuses, before the dry run, a query over private columns that DuckDB cannot check (GoogleSQL-only syntax)', async () => {
    const before = bigquery.requests.length;
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT * EXCEPT (salary) FROM `hr.people` ORDER BY name');
    expect(job).toMatchObject({
      status: 'FAILED',
      error_result: { reason: 'accessDenied', message: expect.stringMatching(/DuckDB cannot check it/) },
    });
    expect(bigquery.requests.slice(before).filter((r) => r.path === `${API}/jobs`)).toEqual([]);
  });

  it('follows columns through the plan DuckDB binds of the same text', async () => {
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT p.name, p.salary, o.amount FROM hr.people p JOIN sales.orders o ON o.id = length(p.name) ORDER BY p.name',
    );
    expect(job).toMatchObject({ status: 'DONE', total_rows: 3, private_row_count: 2 });
    expect((await results(job.id)).column_privacy).toEqual({ name: 'public', salary: 'private', amount: 'public' });
  });

  it("fails a query that reads another tenant's private columns with BigQuery's reason only", async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT CAST(name AS INT64) AS n FROM hr.people');
    expect(job).toMatchObject({
      status: 'FAILED',
      error_result: {
        reason: 'invalidQuery',
        message:
          'BigQuery invalidQuery. The details are withheld: this query reads a table of another tenant that has private columns or an aggregation rule',
      },
    });
    // Whole words: "ada" is also hex, and so can sit inside a UUID of the job.
    expect(JSON.stringify(job)).not.toMatch(/\b(ada|bob|cy)\b/);
    // On the tenant's own data, BigQuery's message as it is.
    const own = await runToEnd(ctx, owner, owner.tenant, 'SELECT CAST(label AS INT64) AS n FROM sales.orders');
    expect(own.error_result.message).toMatch(/label 1/);
  });

  it('keeps the private flag of a column a load with autodetect finds again, as BigQuery reports the columns', async () => {
    const contacts = await sharer.table('contacts', [
      { name: 'name', type: 'STRING' },
      { name: 'phone', type: 'STRING', private: true },
    ]);
    bigquery.loadsWill({
      rows: 1,
      detected: [
        { name: 'name', type: 'STRING', mode: 'NULLABLE' },
        { name: 'phone', type: 'STRING', mode: 'NULLABLE' },
        { name: 'city', type: 'STRING', mode: 'NULLABLE' },
      ],
    });
    const job = await load(ctx, sharer.tenant.editor.token, contacts, {
      fileName: 'contacts.csv',
      content: 'name,phone,city\nada,555,x\n',
      autodetect: true,
    });
    expect(job.status).toBe('Completed');
    const schema = (await sharer.api.get(`/api/v1/tables/${contacts}`)).body.schema as { name: string; private: boolean }[];
    expect(schema.map((field) => [field.name, field.private])).toEqual([
      ['name', false],
      ['phone', true],
      ['city', false],
    ]);
  });

  it("leaves the tenant's own private columns alone", async () => {
    const job = await runToEnd(ctx, sharer, sharer.tenant, 'SELECT name, salary FROM hr.people ORDER BY name');
    expect(job).toMatchObject({ status: 'DONE', private_row_count: 0 });
    const res = await sharer.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(res.body.rows[0].data).toEqual({ name: 'ada', salary: 100 });
  });
});

describe('analysis rules on BigQuery', () => {
  it('refuses a query that breaks a join-only column before the dry run, and a text the two dialects read differently', async () => {
    for (const [text, message] of [
      ['SELECT name FROM hr.people WHERE salary > 150', /^Column hr\.people\.salary is join-only/],
      // DuckDB nests block comments, GoogleSQL does not: checked on the text GoogleSQL reads, the filter shows.
      ['SELECT count(*) AS n FROM hr.people /* /* */ WHERE salary > 150 --*/', /^Column hr\.people\.salary is join-only/],
      ['SELECT name FROM hr.people WHERE name = "ada"', /reads differently in GoogleSQL and DuckDB/],
    ] as [string, RegExp][]) {
      const before = bigquery.requests.length;
      const job = await runToEnd(ctx, owner, owner.tenant, text);
      expect({ text, job }).toMatchObject({
        text,
        job: { status: 'FAILED', error_result: { reason: 'accessDenied', message: expect.stringMatching(message) } },
      });
      expect(bigquery.requests.slice(before).filter((r) => r.path === `${API}/jobs`)).toEqual([]);
    }
  });

  it('refuses a table with rules that the dry run finds but the text does not name as dataset_name.table_name', async () => {
    const people = (await ctx.db.table.findFirstOrThrow({ where: { datasetId: sharer.datasetId, name: 'people' } })).id;
    const { dataset, table } = physicalNames({ datasetId: sharer.datasetId, tableId: people });
    // The CTE's name keeps the rewrite off the path; BigQuery reads it as the physical table all the same.
    const text = `WITH ${dataset} AS (SELECT 1 AS x) SELECT count(*) AS n FROM ${dataset}.${table} WHERE salary > 150`;
    const job = await runToEnd(ctx, owner, owner.tenant, text);
    expect(job).toMatchObject({
      status: 'FAILED',
      error_result: {
        reason: 'accessDenied',
        message: expect.stringMatching(/its text does not name as dataset_name\.table_name/),
      },
    });
  });

  it('applies an aggregation threshold in the HAVING BigQuery runs, and counts the groups it dropped', async () => {
    const visits = await sharer.table('visits', [
      { name: 'customer', type: 'INT64' },
      { name: 'city', type: 'STRING' },
    ]);
    await fill(sharer, visits, "INSERT INTO {table} VALUES (1, 'a'), (2, 'a'), (3, 'a'), (4, 'b'), (4, 'b')");
    const rule = { type: 'aggregation', privacy_unit: 'customer', min_distinct: 3 };
    expect((await sharer.api.patch(`/api/v1/tables/${visits}`, { analysis_rule: rule })).status).toBe(200);
    const text = 'SELECT city, count(*) AS n FROM hr.visits GROUP BY city ORDER BY city';
    const job = await runToEnd(ctx, owner, owner.tenant, text);
    expect(job).toMatchObject({ status: 'DONE', total_rows: 1, suppressed_row_count: 1 });
    expect((await results(job.id)).rows).toEqual([{ data: { city: 'a', n: 3 } }]);
    expect(bigquery.executed).toContainEqual(
      expect.stringMatching(/GROUP BY city\s+HAVING \(COUNT\(DISTINCT `t_[0-9a-f_]+`\.`customer`\) >= 3\)/),
    );
    const refused = await runToEnd(ctx, owner, owner.tenant, 'SELECT city FROM hr.visits');
    expect(refused.error_result).toEqual({
      reason: 'accessDenied',
      message: expect.stringMatching(/allows only aggregating queries/),
    });
    // A dry run answers from BigQuery's dry run, with the rules it would obey.
    const queryId = await owner.query(text);
    const dry = await owner.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      total_bytes_processed: 80,
      referenced_tables: [{ dataset_id: sharer.datasetId, table_id: visits, name: 'hr.visits' }],
      rules: [{ table_id: visits, tenant_id: sharer.tenant.id, analysis_rule: rule, join_only_columns: [] }],
    });
  });
});

describe('retries and stops', () => {
  async function request(jobId: string, signal = new AbortController().signal) {
    return {
      jobId,
      sql: 'SELECT count(*) AS n FROM sales.orders',
      catalog: await readableCatalog(ctx.db, { projectId: owner.projectId, tenantId: owner.tenant.id }),
      signal,
    };
  }

  it('follows the BigQuery job of an earlier attempt (409) instead of running the query again', async () => {
    const jobId = crypto.randomUUID();
    const first = await ctx.deps.queryEngine.run(await request(jobId));
    const runs = bigquery.executed.length;
    bigquery.requests.length = 0;
    const again = await ctx.deps.queryEngine.run(await request(jobId));
    expect(again).toEqual(first);
    expect(bigquery.executed.length).toBe(runs);
    const inserts = bigquery.requests.filter((r) => r.method === 'POST' && r.path === `${API}/jobs`);
    expect(inserts.map((r) => (r.body as { jobReference: { jobId?: string } }).jobReference.jobId)).toEqual([
      undefined,
      `collab_query_${jobId.replaceAll('-', '_')}`,
    ]);
    expect(
      bigquery.requests.some((r) => r.method === 'GET' && r.path === `${API}/jobs/collab_query_${jobId.replaceAll('-', '_')}`),
    ).toBe(true);
  });

  it('cancels the BigQuery job on abort, and a retry runs it anew under the next id', async () => {
    const jobId = crypto.randomUUID();
    const bigQueryJob = `collab_query_${jobId.replaceAll('-', '_')}`;
    const stop = new AbortController();
    bigquery.hold(true);
    try {
      const running = ctx.deps.queryEngine.run(await request(jobId, stop.signal));
      while (!bigquery.jobs.has(bigQueryJob)) await new Promise((resolve) => setTimeout(resolve, 20));
      stop.abort();
      const failure = await running.catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(QueryFailure);
      // With what BigQuery billed the cancelled job for (the fake's measure of the table, and its minimum).
      expect(failure).toMatchObject({
        reason: 'stopped',
        message: 'The job was stopped before it finished',
        usage: { bytesProcessed: 640, bytesBilled: 10 * 2 ** 20 },
      });
    } finally {
      bigquery.hold(false);
    }
    expect(bigquery.requests.some((r) => r.method === 'POST' && r.path === `${API}/jobs/${bigQueryJob}/cancel`)).toBe(true);
    expect(bigquery.jobs.get(bigQueryJob)?.status.errorResult?.reason).toBe('stopped');
    const retried = await ctx.deps.queryEngine.run(await request(jobId));
    expect(retried.totalRows).toBe(1);
    expect(bigquery.jobs.get(`${bigQueryJob}_2`)?.status).toEqual({ state: 'DONE' });
  });
});

describe('cancelling on BigQuery', () => {
  it('cancels the running BigQuery job (jobs.cancel): the job ends CANCELLED, charged what BigQuery billed it', async () => {
    const text = 'SELECT id, label FROM sales.orders';
    const queryId = await owner.query(text);
    bigquery.hold(true);
    try {
      const run = await owner.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
      const jobId = run.body.job_id as string;
      const bigQueryJob = `collab_query_${jobId.replaceAll('-', '_')}`;
      while (!bigquery.jobs.has(bigQueryJob)) await new Promise((resolve) => setTimeout(resolve, 20));
      const asked = await owner.api.post(`/api/v1/query-jobs/${jobId}/cancel`);
      expect(asked.status).toBe(202);
      const job = await finished(ctx, owner.tenant.editor.token, jobId);
      expect(job).toMatchObject({
        status: 'CANCELLED',
        error_result: { reason: 'stopped' },
        total_bytes_processed: 640,
        total_bytes_billed: 10 * 2 ** 20,
      });
      expect(bigquery.requests.some((r) => r.method === 'POST' && r.path === `${API}/jobs/${bigQueryJob}/cancel`)).toBe(true);
      // Not run again under another id, as a worker's stop would be.
      expect(bigquery.jobs.has(`${bigQueryJob}_2`)).toBe(false);
      expect(await ctx.db.queryCost.findUnique({ where: { queryJobId: jobId } })).toMatchObject({
        bytesProcessed: 640n,
        bytesBilled: BigInt(10 * 2 ** 20),
      });
    } finally {
      bigquery.hold(false);
    }
  });
});

describe('controls on BigQuery', () => {
  it('passes maximum_bytes_billed to BigQuery, which fails the job bytesBilledLimitExceeded, uncharged', async () => {
    bigquery.requests.length = 0;
    const text = 'SELECT id FROM sales.orders ORDER BY id';
    const queryId = await owner.query(text);
    const run = await owner.api.post('/api/v1/queries/run', {
      query_id: queryId,
      query_text: text,
      maximum_bytes_billed: '1000',
    });
    const job = await finished(ctx, owner.tenant.editor.token, run.body.job_id);
    expect(job).toMatchObject({
      status: 'FAILED',
      maximum_bytes_billed: '1000',
      error_result: {
        reason: 'bytesBilledLimitExceeded',
        message: 'Query exceeded limit for bytes billed: 1000. 10485760 or higher required.',
      },
      total_bytes_billed: null,
    });
    const inserted = jobInserts().find((insert) => insert.jobReference.jobId !== undefined);
    expect(inserted?.configuration).toMatchObject({ query: { maximumBytesBilled: '1000' } });
    expect(await ctx.db.queryCost.count({ where: { queryJobId: job.id } })).toBe(0);
    const within = await owner.api.post('/api/v1/queries/run', {
      query_id: queryId,
      query_text: text,
      maximum_bytes_billed: 10485760,
    });
    expect(await finished(ctx, owner.tenant.editor.token, within.body.job_id)).toMatchObject({ status: 'DONE' });
  });

  it("describes a page's columns with the dry run's types, nested ones as GoogleSQL writes them", async () => {
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT id, label, amount, ok, [id] AS ids FROM sales.orders ORDER BY id',
    );
    expect((await results(job.id, 1, 1)).schema).toEqual([
      { name: 'id', type: 'INT64' },
      { name: 'label', type: 'STRING' },
      { name: 'amount', type: 'FLOAT64' },
      { name: 'ok', type: 'BOOL' },
      { name: 'ids', type: 'ARRAY<INT64>' },
    ]);
  });

  it("deletes an expired result (tables.delete) and its exports' objects, taking a table already gone as deleted", async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT id FROM sales.orders');
    const created = await owner.api.post(`/api/v1/query-jobs/${job.id}/exports`, { format: 'CSV', compression: 'NONE' });
    let exported;
    do exported = (await owner.api.get(`/api/v1/exports/${created.body.id}`)).body;
    while (['PENDING', 'RUNNING'].includes(exported.status));
    expect(exported.status).toBe('DONE');
    expect(gcs.objects.has(exported.storage_path)).toBe(true);
    const table = `r_${String(job.id).replaceAll('-', '_')}`;
    bigquery.requests.length = 0;
    const realNow = ctx.deps.now;
    ctx.deps.now = () => new Date(Date.parse(job.results_expire_at) + 11_000);
    try {
      expect((await owner.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(410);
      expect(await deleteExpiredResults(ctx.deps)).toBeGreaterThanOrEqual(1);
    } finally {
      ctx.deps.now = realNow;
    }
    expect(gcs.objects.has(exported.storage_path)).toBe(false);
    expect(bigquery.tables.has(`collab_results.${table}`)).toBe(false);
    // Deleted again (a sweep killed before it marked the job): BigQuery's 404 is a table already deleted.
    await ctx.deps.queryEngine.dropResult(job.id);
    const deletes = bigquery.requests.filter(
      (r) => r.method === 'DELETE' && r.path === `${API}/datasets/collab_results/tables/${table}`,
    );
    expect(deletes).toHaveLength(2);
  });
});
