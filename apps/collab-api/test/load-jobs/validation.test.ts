/** A file whose values do not fit fails its job with where and why (the first ten, and how many), and loads nothing. */
import { createTestContext, type TestContext } from '../context.js';
import { load, loadFixture, type LoadFixture, rowsOf } from './helpers.js';

jest.setTimeout(120_000);

let ctx: TestContext;
let fixture: LoadFixture;
beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  fixture = await loadFixture(ctx);
});
afterAll(() => ctx.close());

const schema = [
  { name: 'id', type: 'INT64', mode: 'REQUIRED' },
  { name: 'name', type: 'STRING' },
  { name: 'at', type: 'DATE' },
];

async function failed(fileName: string, content: string) {
  const table = await fixture.table(schema);
  const job = await load(ctx, fixture.token, table, { fileName, content });
  expect(job).toMatchObject({ status: 'Failed', statistics: { rows_loaded: 0 } });
  expect(await rowsOf(ctx, fixture, table)).toEqual([]);
  return job.error_details;
}

it('names the row, column and reason of each value of the wrong type or missing from a REQUIRED column', async () => {
  expect(await failed('a.csv', 'id,name,at\n1,Ada,2026-01-01\nx,Bob,2026-01-02\n3,Cy,someday\n,Di,\n1.5,Ed,\n')).toEqual({
    message: 'The file has 4 problems (values do not fit the table); nothing was loaded',
    problems: [
      { row: 2, column: 'id', reason: 'expected a INT64 value, got "x"' },
      { row: 3, column: 'at', reason: 'expected a DATE value, got "someday"' },
      { row: 4, column: 'id', reason: 'REQUIRED column has no value' },
      { row: 5, column: 'id', reason: 'expected a INT64 value, got "1.5"' },
    ],
    problem_count: 4,
  });
});

it('lists the first ten problems and counts them all', async () => {
  const rows = Array.from({ length: 25 }, (_, i) => `bad${i},n,`).join('\n');
  const details = await failed('many.csv', `${rows}\n`);
  expect(details.problem_count).toBe(25);
  expect(details.problems).toHaveLength(10);
  expect(details.problems[0]).toEqual({ row: 1, column: 'id', reason: 'expected a INT64 value, got "bad0"' });
});

it('reports broken CSV: too many or too few values, a quote left open', async () => {
  const details = await failed('broken.csv', '1,a,2026-01-01\n2,b,2026-01-01,extra\n3,c\n4,"open,2026-01-01\n');
  expect(details.message).toBe('The file has 3 problems (records that cannot be read as CSV); nothing was loaded');
  expect(details.problems).toEqual([
    { row: 2, column: null, reason: expect.stringContaining('Expected Number of Columns: 3 Found: 4') },
    { row: 3, column: expect.any(String), reason: expect.stringContaining('Expected Number of Columns: 3 Found: 2') },
    { row: 4, column: expect.any(String), reason: expect.stringContaining('unterminated quote') },
  ]);
});

it('reports invalid JSON, lines that are no object, and keys the table lacks, by line', async () => {
  const details = await failed('bad.ndjson', '{"id": 1}\n{"id": 2,\n[1, 2]\n{"id": 4, "nope": true}\n{"id": "x"}\n');
  expect(details).toEqual({
    message: expect.stringContaining('lines that are not JSON objects'),
    problems: [
      { row: 2, column: null, reason: 'invalid JSON' },
      { row: 3, column: null, reason: 'not a JSON object (one object per line)' },
      { row: 4, column: 'nope', reason: 'the table has no column of this name' },
    ],
    problem_count: 3,
  });
});

it('reports a CSV header with a column the table lacks', async () => {
  const details = await failed('extra.csv', 'id,name,at,unknown\n1,a,2026-01-01,x\n');
  // Not a header (a name the table lacks), so the first line is data with one value too many.
  expect(details.problems[0]).toMatchObject({ row: 1, reason: expect.stringContaining('Expected Number of Columns') });
});

it('leaves the rows a refused WRITE_TRUNCATE load was to replace', async () => {
  const table = await fixture.table(schema);
  expect(await load(ctx, fixture.token, table, { fileName: 'a.csv', content: 'id,name,at\n1,Ada,2026-01-01\n' })).toMatchObject({
    status: 'Completed',
  });
  const job = await load(ctx, fixture.token, table, {
    fileName: 'b.csv',
    content: 'id,name,at\n2,Bob,2026-01-02\n3,Cy,someday\n',
    write_disposition: 'WRITE_TRUNCATE',
  });
  expect(job.error_details.problems).toEqual([{ row: 2, column: 'at', reason: 'expected a DATE value, got "someday"' }]);
  expect(await rowsOf(ctx, fixture, table)).toEqual([{ id: '1', name: 'Ada', at: '2026-01-01' }]);
});

it('loads values that DuckDB’s typed CSV reading refuses but the rules take (spaces around them)', async () => {
  const table = await fixture.table([...schema, { name: 'ok', type: 'BOOL' }]);
  const job = await load(ctx, fixture.token, table, {
    fileName: 'a.csv',
    content: 'id,name,at,ok\n 1 ,Ada, 2026-01-01 , yes \n',
  });
  expect(job).toMatchObject({ status: 'Completed', statistics: { rows_loaded: 1 } });
  expect(await rowsOf(ctx, fixture, table)).toEqual([{ id: '1', name: 'Ada', at: '2026-01-01', ok: true }]);
});
