/** The load-job routes: the presigned flow, limits, cancel, listing, tenancy, and one running job per table. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { createMetrics } from '@repo/http';
import { buildApp } from '../../src/app.js';
import { createDatabaseClient } from '../../src/database.js';
import { createDeps } from '../../src/deps.js';
import { bearer, createTestContext, type TestContext } from '../context.js';
import { ended, load, loadFixture, type LoadFixture, rowsOf, schemaOf, upload } from './helpers.js';

jest.setTimeout(120_000);

let ctx: TestContext;
let fixture: LoadFixture;
beforeAll(async () => {
  // The worker starts in the tests that need jobs to run; until then, started jobs wait Running.
  ctx = await createTestContext({ COLLAB_LOAD_MAX_UPLOAD_BYTES: String(64 * 1024) });
  fixture = await loadFixture(ctx);
});
afterAll(() => ctx.close());

const schema = [
  { name: 'id', type: 'INT64', mode: 'REQUIRED' },
  { name: 'name', type: 'STRING' },
];
const as = (token: string) => ({
  get: (url: string) => request(ctx.app).get(url).set(bearer(token)),
  post: (url: string, body?: object) => request(ctx.app).post(url).set(bearer(token)).send(body),
});

describe('without the worker running', () => {
  it('answers 409 to a second start on a table while a job runs, from either of two app instances at once', async () => {
    const table = await fixture.table(schema);
    const otherDb = createDatabaseClient(ctx.databaseUrl, 2);
    const other = await createDeps(ctx.deps.config, {
      db: otherDb,
      logger: ctx.deps.logger,
      metrics: createMetrics({ collectDefault: false, service: 'collab-api' }),
    });
    try {
      const apps = [ctx.app, buildApp(other.deps)];
      const starts = await Promise.all(
        [0, 1, 0, 1].map((i) =>
          request(apps[i]!)
            .post('/load_job/')
            .set(bearer(fixture.token))
            .field('table_id', table)
            .attach('file', Buffer.from('1,a\n'), 'a.csv'),
        ),
      );
      expect(starts.map((res) => res.status).sort()).toEqual([201, 409, 409, 409]);
      expect(starts.find((res) => res.status === 409)!.body).toEqual({
        detail: 'A load job is already running for this table: wait for it to end, or cancel it',
      });
      // Refused starts leave no job and no file behind.
      expect(await ctx.db.loadJob.count({ where: { tableId: table } })).toBe(1);
    } finally {
      await other.close();
      await otherDb.$disconnect();
    }
  });

  it('cancels a Pending job at once, a Running one through the worker (the table unchanged), and refuses an ended one', async () => {
    const table = await fixture.table(schema);
    const pending = await as(fixture.token).post('/load_job/', { table_id: table, source_format: 'CSV' });
    expect(pending.status).toBe(201);
    const cancelled = await as(fixture.token).post(`/load_job/${pending.body.id}/cancel`);
    expect({ status: cancelled.status, job: cancelled.body.status }).toEqual({ status: 202, job: 'Cancelled' });
    expect((await as(fixture.token).post(`/load_job/${pending.body.id}/cancel`)).status).toBe(409);

    const running = await upload(ctx, fixture.token, table, { fileName: 'a.csv', content: '1,a\n' });
    expect(running.body.status).toBe('Running');
    const asked = await as(fixture.token).post(`/load_job/${running.body.id}/cancel`);
    expect({ status: asked.status, job: asked.body.status }).toEqual({ status: 202, job: 'Running' });
    await ctx.startWorker();
    expect(await ended(ctx, fixture.token, running.body.id)).toMatchObject({ status: 'Cancelled', ended_at: expect.any(String) });
    expect(await rowsOf(ctx, fixture, table)).toEqual([]);
    // The table is free again.
    expect((await load(ctx, fixture.token, table, { fileName: 'b.csv', content: '2,b\n' })).status).toBe('Completed');
  });
});

describe('with the worker', () => {
  beforeAll(() => ctx.startWorker());

  it('creates a Pending job with an upload URL, takes the file there, and starts once it is there', async () => {
    const table = await fixture.table(schema);
    const created = await as(fixture.token).post('/load_job/', {
      table_id: table,
      source_format: 'CSV',
      write_disposition: 'WRITE_TRUNCATE',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'Pending',
      source_format: 'CSV',
      source_uri: expect.stringMatching(/^local:\/\/load-jobs\//),
    });
    expect(Date.parse(created.body.upload_url_expires_at)).toBeGreaterThan(Date.now() + 3_000_000);
    const url = new URL(created.body.upload_url);
    expect(url.pathname).toBe(`/load_job/${created.body.id}/file`);

    const early = await as(fixture.token).post(`/load_job/${created.body.id}/upload`);
    expect({ status: early.status, body: early.body }).toEqual({
      status: 409,
      body: { detail: 'The file has not been uploaded yet: PUT it to the upload_url first' },
    });
    // The link is the credential: a wrong token is refused, and so is a link without its query.
    const put = (query: string) =>
      request(ctx.app)
        .put(`${url.pathname}${query}`)
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from('1,a\n2,b\n'));
    expect((await put('')).status).toBe(403);
    expect((await put(url.search.replace(/&?token=[^&]+/, ''))).status).toBe(403);
    expect((await put(url.search.replace(/token=[^&]+/, 'token=forged'))).status).toBe(403);
    expect((await put(url.search)).body).toEqual({ size: 8 });

    const started = await as(fixture.token).post(`/load_job/${created.body.id}/upload`);
    expect({ status: started.status, job: started.body.status }).toEqual({ status: 200, job: 'Running' });
    expect(await ended(ctx, fixture.token, created.body.id)).toMatchObject({
      status: 'Completed',
      statistics: { rows_loaded: 2 },
    });
    expect((await put(url.search)).status).toBe(409);
    expect((await as(fixture.token).post(`/load_job/${created.body.id}/upload`)).status).toBe(409);
  });

  it('answers 413 to a file over the limit, keeping nothing of it', async () => {
    const table = await fixture.table(schema);
    const res = await upload(ctx, fixture.token, table, { fileName: 'big.csv', content: Buffer.alloc(65 * 1024, 'a') });
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/larger than 65536 bytes/);
    expect(await ctx.db.loadJob.count({ where: { tableId: table } })).toBe(0);
    const stored = await readdir(path.join(ctx.dataDir, 'objects'), { recursive: true, withFileTypes: true });
    expect(stored.filter((entry) => entry.isFile() && entry.name.startsWith('big'))).toEqual([]);
  });

  it('infers the format from the extension, and needs source_format when it cannot', async () => {
    const table = await fixture.table(schema);
    const res = await upload(ctx, fixture.token, table, { fileName: 'data.txt', content: '1,a\n' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'source_format'] });
    const named = await upload(ctx, fixture.token, table, { fileName: 'data.txt', content: '1,a\n', source_format: 'CSV' });
    expect(named.status).toBe(201);
    expect(await ended(ctx, fixture.token, named.body.id)).toMatchObject({ status: 'Completed', source_format: 'CSV' });
    const invalid = await as(fixture.token).post('/load_job/', {
      table_id: 'nope',
      source_format: 'XML',
      write_disposition: 'SOMETIMES',
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.')).sort()).toEqual([
      'body.source_format',
      'body.table_id',
      'body.write_disposition',
    ]);
  });

  it('lists a table’s jobs newest first, a page at a time', async () => {
    const table = await fixture.table(schema);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await load(ctx, fixture.token, table, { fileName: 'a.csv', content: `${i},x\n` })).id);
    const page = (query: string) => as(fixture.token).get(`/load_job/?table_id=${table}${query}`);
    expect((await page('')).body.load_jobs.map((job: { id: string }) => job.id)).toEqual(ids.toReversed());
    expect((await page('&skip=1&limit=1')).body.load_jobs.map((job: { id: string }) => job.id)).toEqual([ids[1]]);
    expect((await as(fixture.token).get('/load_job/')).status).toBe(422);
  });

  it('keeps jobs and tables to their tenant: another tenant’s are 404, and so is no token 401', async () => {
    const table = await fixture.table(schema);
    const job = await load(ctx, fixture.token, table, { fileName: 'a.csv', content: '1,a\n' });
    const other = await loadFixture(ctx, 'Other');
    expect((await as(other.token).get(`/load_job/${job.id}`)).status).toBe(404);
    expect((await as(other.token).post(`/load_job/${job.id}/cancel`)).status).toBe(404);
    expect((await as(other.token).post(`/load_job/${job.id}/upload`)).status).toBe(404);
    expect((await as(other.token).get(`/load_job/?table_id=${table}`)).status).toBe(404);
    expect((await upload(ctx, other.token, table, { fileName: 'a.csv', content: '1,a\n' })).status).toBe(404);
    expect((await request(ctx.app).get(`/load_job/${job.id}`)).status).toBe(401);
  });

  it("fails an autodetect load whose columns would not fit the table's analysis rule, loading nothing", async () => {
    const columns = [
      { name: 'cust', type: 'STRING' },
      { name: 'v', type: 'INT64' },
    ];
    const rule = { type: 'aggregation', privacy_unit: 'cust', min_distinct: 3 };
    const patch = (id: string, body: object) =>
      request(ctx.app).patch(`/api/v1/tables/${id}`).set(bearer(fixture.token)).send(body);
    const cases = [
      { fileName: 'other.csv', content: 'x,y\n1,2\n', problem: /privacy_unit "cust" is not a column of the table/ },
      { fileName: 'listed.json', content: '{"cust": ["a", "b"], "v": 1}\n', problem: /privacy_unit "cust" is REPEATED/ },
    ];
    for (const { problem, ...file } of cases) {
      const table = await fixture.table(columns);
      await load(ctx, fixture.token, table, { fileName: 'first.csv', content: 'cust,v\na,1\n' });
      expect((await patch(table, { analysis_rule: rule })).status).toBe(200);
      const job = await load(ctx, fixture.token, table, { ...file, autodetect: true, write_disposition: 'WRITE_TRUNCATE' });
      expect({ file: file.fileName, status: job.status }).toEqual({ file: file.fileName, status: 'Failed' });
      expect(job.error_details.message).toMatch(problem);
      expect(job.error_details.message).toMatch(/analysis rule/);
      expect(await schemaOf(ctx, fixture.token, table)).toMatchObject(columns);
      expect(await rowsOf(ctx, fixture, table)).toEqual([{ cust: 'a', v: '1' }]);
    }
  });

  it('renames a table without asking whether its analysis rule fits (no column changes)', async () => {
    const table = await fixture.table([{ name: 'cust', type: 'STRING' }]);
    const patch = (body: object) => request(ctx.app).patch(`/api/v1/tables/${table}`).set(bearer(fixture.token)).send(body);
    expect((await patch({ analysis_rule: { type: 'aggregation', privacy_unit: 'cust', min_distinct: 2 } })).status).toBe(200);
    // A rule that no longer fits (as one set before loads were checked): queries are refused until the owner fixes it.
    await ctx.db.table.update({ where: { id: table }, data: { schema: [{ name: 'other', type: 'STRING', mode: 'NULLABLE' }] } });
    const renamed = await patch({ name: 'Renamed' });
    expect({ status: renamed.status, name: renamed.body.name }).toEqual({ status: 200, name: 'Renamed' });
    expect(
      (
        await patch({
          schema: [
            { name: 'other', type: 'STRING' },
            { name: 'more', type: 'STRING' },
          ],
        })
      ).status,
    ).toBe(409);
  });
});
