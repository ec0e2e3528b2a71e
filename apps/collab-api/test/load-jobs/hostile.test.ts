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
import { avroFile, parquetFile } from './files.js';
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

it('fails an Avro file cut short inside a block, loading none of the blocks before the cut', async () => {
  const table = await fixture.table([
    { name: 'id', type: 'INT64' },
    { name: 's', type: 'STRING' },
  ]);
  const encoder = new avro.streams.BlockEncoder(
    {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'id', type: 'long' },
        { name: 's', type: 'string' },
      ],
    },
    { blockSize: 100_000 },
  );
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve) => encoder.on('end', resolve));
  for (let id = 0; id < 10_000; id += 1) encoder.write({ id, s: `row ${id} ${'x'.repeat(40)}` });
  encoder.end();
  await done;
  const whole = Buffer.concat(chunks);
  // avsc itself ends without a word at any of these cuts (the last block's sync marker, its data).
  for (const cut of [1, 16, 17, 5_000]) {
    const job = await load(ctx, fixture.token, table, { fileName: 'cut.avro', content: whole.subarray(0, whole.length - cut) });
    expect({ cut, status: job.status, message: job.error_details?.message }).toEqual({
      cut,
      status: 'Failed',
      message: expect.stringMatching(/^The file could not be read as Avro: it ends inside a block/),
    });
  }
  expect(await rowsOf(ctx, fixture, table)).toEqual([]);
  const job = await load(ctx, fixture.token, table, { fileName: 'whole.avro', content: whole });
  expect({ status: job.status, rows: job.statistics.rows_loaded }).toEqual({ status: 'Completed', rows: 10_000 });
});

it('keeps decimals with more than 9 digits after the point exactly (as text, autodetecting), or refuses them: never rounds', async () => {
  const exact = '1.123456789012';
  // 1123456789012 × 10^-12, as Avro writes a decimal: big-endian two's complement.
  const avroDecimal = await avroFile(
    {
      type: 'record',
      name: 'd',
      fields: [{ name: 'd', type: { type: 'bytes', logicalType: 'decimal', precision: 20, scale: 12 } }],
    },
    [{ d: Buffer.from(1_123_456_789_012n.toString(16).padStart(12, '0'), 'hex') }],
  );
  const parquetDecimal = await parquetFile(`SELECT ${exact}::DECIMAL(18,12) AS d`);
  const table = await fixture.table([{ name: 'x', type: 'STRING' }]);
  for (const [fileName, content] of [
    ['dec.avro', avroDecimal],
    ['dec.parquet', parquetDecimal],
  ] as const) {
    const job = await load(ctx, fixture.token, table, {
      fileName,
      content,
      autodetect: true,
      write_disposition: 'WRITE_TRUNCATE',
    });
    expect({ fileName, status: job.status }).toEqual({ fileName, status: 'Completed' });
    expect(await schemaOf(ctx, fixture.token, table)).toMatchObject([{ name: 'd', type: 'STRING' }]);
    expect(await rowsOf(ctx, fixture, table)).toEqual([{ d: exact }]);
  }
  // Into a NUMERIC column, the value is refused with its row, as the warehouse refuses it.
  const numeric = await fixture.table([{ name: 'n', type: 'NUMERIC' }]);
  const job = await load(ctx, fixture.token, numeric, { fileName: 'n.csv', content: `n\n1.5\n${exact}\n` });
  expect({ status: job.status, problems: job.error_details?.problems }).toEqual({
    status: 'Failed',
    problems: [{ row: 2, column: 'n', reason: `expected a NUMERIC value, got "${exact}"` }],
  });
  expect(await rowsOf(ctx, fixture, numeric)).toEqual([]);
});

it('checks a wide file in passes of columns, and lists the problems of every pass in file order', async () => {
  const names = Array.from({ length: 250 }, (_, i) => `c${i}`);
  const table = await fixture.table(names.map((name) => ({ name, type: 'INT64' })));
  const row = (bad: Record<string, string>) => names.map((name) => bad[name] ?? '1').join(',');
  const csv = `${names.join(',')}\n${row({ c200: 'x' })}\n${row({ c3: 'y', c120: 'z' })}\n`;
  const job = await load(ctx, fixture.token, table, { fileName: 'wide.csv', content: csv });
  expect({ status: job.status, problems: job.error_details?.problems, count: job.error_details?.problem_count }).toEqual({
    status: 'Failed',
    problems: [
      { row: 1, column: 'c200', reason: 'expected a INT64 value, got "x"' },
      { row: 2, column: 'c120', reason: 'expected a INT64 value, got "z"' },
      { row: 2, column: 'c3', reason: 'expected a INT64 value, got "y"' },
    ],
    count: 3,
  });
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
