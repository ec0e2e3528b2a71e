/**
 * Load files of hostile shapes, each once loaded or refused with its problem listed, never loaded
 * wrong without a word: a CSV header past the old 64 KB probe, JSON keys that fold differently in
 * JavaScript and DuckDB or differ only in case, NUL characters in what a problem quotes, Avro longs
 * past 2^53; and a column made private just before a load takes its turn, which the load keeps.
 */
import { randomUUID } from 'node:crypto';
import avro from 'avsc';
import request from 'supertest';
import { bigLong } from '../../src/adapters/warehouse/avro-long.js';
import { bearer, createTestContext, type TestContext } from '../context.js';
import { ended, load, loadFixture, type LoadFixture, rowsOf, schemaOf, upload } from './helpers.js';

let ctx: TestContext;
let fixture: LoadFixture;
beforeAll(async () => {
  ctx = await createTestContext();
  fixture = await loadFixture(ctx, 'Hostile');
  await ctx.startWorker();
}, 60_000);
afterAll(() => ctx.close());

it('takes a CSV header of 75 KB (250 columns of 299-character names) for a header, not a row of data', async () => {
  const names = Array.from({ length: 250 }, (_, i) => `c${String(i).padStart(4, '0')}${'x'.repeat(294)}`);
  const table = await fixture.table(names.map((name) => ({ name, type: 'STRING' })));
  const csv = `${names.join(',')}\n${names.map((_, i) => `v${i}`).join(',')}\n`;
  const job = await load(ctx, fixture.token, table, { fileName: 'wide.csv', content: csv });
  const rows = await rowsOf(ctx, fixture, table);
  expect({ status: job.status, loaded: job.statistics.rows_loaded, first: rows.map((row) => row[names[0]!]) }).toEqual({
    status: 'Completed',
    loaded: 1,
    first: ['v0'],
  });
});

it('fills a column from a JSON key that DuckDB folds to its name (İD for id), as the checks fold it', async () => {
  const table = await fixture.table([
    { name: 'id', type: 'STRING' },
    { name: 'n', type: 'INT64' },
  ]);
  const job = await load(ctx, fixture.token, table, { fileName: 'a.json', content: '{"İD": "one", "n": 1}\n' });
  expect(job.status).toBe('Completed');
  expect(await rowsOf(ctx, fixture, table)).toEqual([{ id: 'one', n: '1' }]);
});

it('refuses, autodetecting, a line whose keys differ only in case (the second one’s values were lost)', async () => {
  const table = await fixture.table([{ name: 'x', type: 'STRING' }]);
  const job = await load(ctx, fixture.token, table, {
    fileName: 'a.json',
    content: '{"a": 1, "A": 2}\n',
    autodetect: true,
    write_disposition: 'WRITE_TRUNCATE',
  });
  expect({ status: job.status, problems: job.error_details?.problems }).toEqual({
    status: 'Failed',
    problems: [{ row: 1, column: null, reason: 'two keys name one column (they differ only in case)' }],
  });
});

it.each([
  ['a value', '{"n": "1\\u0000x"}\n'],
  ['a key', '{"n\\u0000": 1}\n'],
])('fails at once a load whose problem quotes %s holding a NUL, the NUL written out', async (_what, content) => {
  const table = await fixture.table([{ name: 'n', type: 'INT64' }]);
  const job = await load(ctx, fixture.token, table, { fileName: 'a.json', content });
  // jsonb refused the NUL: the job's end failed until its retries ran out, and then named Prisma's error.
  expect(job.status).toBe('Failed');
  expect(job.error_details.problems).toHaveLength(1);
  expect(JSON.stringify(job.error_details)).toContain('\\\\u0000');
  expect(job.error_details.message).not.toMatch(/prisma|invocation|\.ts:/i);
});

it('loads an Avro long past 2^53 with every digit', async () => {
  const table = await fixture.table([{ name: 'n', type: 'INT64', mode: 'REQUIRED' }]);
  const type = avro.Type.forSchema(
    { type: 'record', name: 'r', fields: [{ name: 'n', type: 'long' }] },
    { registry: { long: bigLong } },
  );
  const encoder = new avro.streams.BlockEncoder(type);
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve) => encoder.on('end', resolve));
  encoder.end({ n: 2n ** 60n + 1n });
  await done;
  const job = await load(ctx, fixture.token, table, { fileName: 'big.avro', content: Buffer.concat(chunks) });
  expect({ status: job.status, error: job.error_details?.message ?? null }).toEqual({ status: 'Completed', error: null });
  expect(await rowsOf(ctx, fixture, table)).toEqual([{ n: String(2n ** 60n + 1n) }]);
});

it('keeps a private flag a PATCH set while the load waited for its turn', async () => {
  const busy = await loadFixture(ctx, 'Busy');
  const table = await fixture.table([
    { name: 'id', type: 'INT64' },
    { name: 'email', type: 'STRING' },
  ]);
  const started = await upload(ctx, fixture.token, table, {
    fileName: 'a.csv',
    content: 'id,email,extra\n1,a@example.com,z\n',
    autodetect: true,
    write_disposition: 'WRITE_TRUNCATE',
  });
  expect(started.status).toBe(201);
  // Wide tables of another tenant keep the warehouse (one operation at a time) busy while the load reads the table.
  const wide = Array.from({ length: 10_000 }, (_, i) => ({
    name: `c${i}`,
    type: 'STRING' as const,
    mode: 'NULLABLE' as const,
    private: false,
  }));
  const wides = Array.from({ length: 20 }, () =>
    ctx.deps.warehouse.createTable({ datasetId: busy.datasetId, tableId: randomUUID() }, wide),
  );
  await new Promise((resolve) => setTimeout(resolve, 150));
  const patched = await request(ctx.app)
    .patch(`/api/v1/tables/${table}`)
    .set(bearer(fixture.token))
    .send({
      schema: [
        { name: 'id', type: 'INT64' },
        { name: 'email', type: 'STRING', private: true },
      ],
    });
  expect(patched.status).toBe(200);
  await ended(ctx, fixture.token, started.body.id);
  await Promise.all(wides);
  // Whichever ran first, a load never clears a private flag.
  expect((await schemaOf(ctx, fixture.token, table)).find((field: { name: string }) => field.name === 'email')).toMatchObject({
    private: true,
  });
});
