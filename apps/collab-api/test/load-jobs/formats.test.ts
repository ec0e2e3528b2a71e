/** Every format and write disposition, and autodetect, through POST /load_job/ and the worker, into DuckDB. */
import { createTestContext, type TestContext } from '../context.js';
import { avroFile, parquetFile } from './files.js';
import { load, loadFixture, type LoadFixture, rowsOf, schemaOf } from './helpers.js';

jest.setTimeout(120_000);

let ctx: TestContext;
let fixture: LoadFixture;
beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  fixture = await loadFixture(ctx);
});
afterAll(() => ctx.close());

const people = [
  { name: 'id', type: 'INT64', mode: 'REQUIRED' },
  { name: 'name', type: 'STRING' },
  { name: 'score', type: 'FLOAT64' },
];
const PEOPLE_ROWS = [
  { id: '1', name: 'Ada', score: 1.5 },
  { id: '2', name: 'Grace', score: null },
];

describe('CSV', () => {
  it('loads a header, quoted commas and line breaks, empty values, and skips a byte order mark', async () => {
    const table = await fixture.table(people);
    const job = await load(ctx, fixture.token, table, {
      fileName: 'people.csv',
      content: '\uFEFFid,name,score\n1,"Lovelace, Ada",1.5\n2,"two\nlines",\n3,,2\n',
    });
    expect(job).toMatchObject({ status: 'Completed', source_format: 'CSV', statistics: { rows_loaded: 3 }, error_details: null });
    expect(job.statistics.bytes_processed).toBeGreaterThan(0);
    expect(job.statistics.duration_ms).toBeGreaterThanOrEqual(0);
    expect(await rowsOf(ctx, fixture, table)).toEqual([
      { id: '1', name: 'Lovelace, Ada', score: 1.5 },
      { id: '2', name: 'two\nlines', score: null },
      { id: '3', name: null, score: 2 },
    ]);
  });

  it('reads a file without a header by position, and a header in another order by name', async () => {
    const table = await fixture.table(people);
    expect(await load(ctx, fixture.token, table, { fileName: 'a.csv', content: '1,Ada,1.5\r\n2,Grace,\r\n' })).toMatchObject({
      status: 'Completed',
    });
    expect(await load(ctx, fixture.token, table, { fileName: 'b.csv', content: 'Score, ID ,name\n3,3,Hedy\n' })).toMatchObject({
      status: 'Completed',
    });
    expect(await rowsOf(ctx, fixture, table)).toEqual([...PEOPLE_ROWS, { id: '3', name: 'Hedy', score: 3 }]);
  });

  it('fails a file whose lines end in more than one way with that reason', async () => {
    const table = await fixture.table(people);
    for (const content of ['id,name\r\n1,Ada\n2,Grace\n', 'id,name\n1,Ada\r\n2,Grace\r\n', '1,Ada\r\n2,Grace\n']) {
      expect(await load(ctx, fixture.token, table, { fileName: 'mixed.csv', content })).toMatchObject({
        status: 'Failed',
        error_details: {
          message:
            'The file could not be read as CSV: its lines end in more than one way (CRLF and LF mixed, say); use one line ending throughout',
        },
      });
    }
  });

  it('loads a header and a first value longer than DuckDB reads a line by default (2 MB)', async () => {
    const table = await fixture.table(people);
    const long = 'x'.repeat(3 * 1024 * 1024);
    const job = await load(ctx, fixture.token, table, { fileName: 'long.csv', content: `name,id\n"${long}",7\n` });
    expect(job).toMatchObject({ error_details: null, status: 'Completed', statistics: { rows_loaded: 1 } });
    expect((await rowsOf(ctx, fixture, table)).map((loaded) => [loaded.id, (loaded.name as string).length])).toEqual([
      ['7', long.length],
    ]);
  });

  it('takes every column type', async () => {
    const table = await fixture.table([
      { name: 'n', type: 'NUMERIC' },
      { name: 'b', type: 'BOOL' },
      { name: 'd', type: 'DATE' },
      { name: 'dt', type: 'DATETIME' },
      { name: 'ts', type: 'TIMESTAMP' },
      { name: 't', type: 'TIME' },
      { name: 'bytes', type: 'BYTES' },
      { name: 'j', type: 'JSON' },
      { name: 'tags', type: 'STRING', mode: 'REPEATED' },
    ]);
    const job = await load(ctx, fixture.token, table, {
      fileName: 'types.csv',
      content:
        'n,b,d,dt,ts,t,bytes,j,tags\n12.5,yes,2026-11-23,2026-11-23 10:00:00,2026-11-23T10:00:00Z,10:30:00,aGk=,"{""a"":1}","[""x"",""y""]"\n',
    });
    expect(job.status).toBe('Completed');
    expect(await rowsOf(ctx, fixture, table)).toEqual([
      {
        n: '12.500000000',
        b: true,
        d: '2026-11-23',
        dt: '2026-11-23 10:00:00',
        ts: '2026-11-23 10:00:00+00',
        t: '10:30:00',
        bytes: 'hi',
        j: '{"a":1}',
        tags: ['x', 'y'],
      },
    ]);
  });
});

describe('newline-delimited JSON', () => {
  it('loads one object per line (.json, .ndjson, .jsonl), by key, nested values as JSON', async () => {
    const table = await fixture.table([
      ...people,
      { name: 'tags', type: 'INT64', mode: 'REPEATED' },
      { name: 'meta', type: 'JSON' },
    ]);
    const lines = [
      '{"id": 1, "name": "Ada", "score": 1.5, "tags": [1, 2], "meta": {"a": [1]}}',
      '',
      '{"name": "Grace", "id": "2"}',
    ];
    for (const fileName of ['a.json', 'b.ndjson', 'c.jsonl']) {
      expect(await load(ctx, fixture.token, table, { fileName, content: `${lines.join('\n')}\n` })).toMatchObject({
        status: 'Completed',
        source_format: 'JSON',
        statistics: { rows_loaded: 2 },
      });
    }
    const rows = await rowsOf(ctx, fixture, table);
    expect(rows).toHaveLength(6);
    expect(rows.slice(0, 2)).toEqual([
      { ...PEOPLE_ROWS[0], tags: ['1', '2'], meta: '{"a":[1]}' },
      { ...PEOPLE_ROWS[1], tags: [], meta: null },
    ]);
  });
});

describe('newline-delimited JSON keys in another case', () => {
  it('matches keys to columns without regard to case, line by line, and refuses a line that names a column twice', async () => {
    const table = await fixture.table(people);
    const lines = '{"ID": 1, "Name": "Ada", "SCORE": 1.5}\n{"id": 2, "name": "Grace"}\n';
    expect(await load(ctx, fixture.token, table, { fileName: 'cased.json', content: lines })).toMatchObject({
      status: 'Completed',
      statistics: { rows_loaded: 2 },
    });
    expect(await rowsOf(ctx, fixture, table)).toEqual(PEOPLE_ROWS);
    const twice = await load(ctx, fixture.token, table, { fileName: 'twice.json', content: '{"id": 3, "ID": 4}\n' });
    expect(twice).toMatchObject({
      status: 'Failed',
      error_details: { problems: [{ row: 1, column: null, reason: 'two keys name one column (they differ only in case)' }] },
    });
  });
});

describe('newline-delimited JSON of hostile shapes', () => {
  it('refuses a line nested deeper than 500 levels, with or without autodetect, and keeps serving', async () => {
    // 100,000 levels (200 KB) crashed the process inside DuckDB's JSON reader, and each restart again.
    const deep = `{"id": 1, "doc": ${'['.repeat(100_000)}${']'.repeat(100_000)}}\n`;
    const table = await fixture.table([
      { name: 'id', type: 'INT64' },
      { name: 'doc', type: 'JSON' },
    ]);
    for (const autodetect of [true, false]) {
      const job = await load(ctx, fixture.token, table, { fileName: 'deep.json', content: deep, autodetect });
      expect(job).toMatchObject({
        status: 'Failed',
        error_details: {
          message: 'The file nests arrays and objects 100001 levels deep: at most 500 are loaded (as BigQuery allows for JSON)',
        },
      });
    }
    // 500 levels load, a string of brackets is no nesting.
    const fine = `{"id": 2, "doc": ${'['.repeat(499)}${']'.repeat(499)}, "s": "${'['.repeat(1000)}"}\n`;
    const job = await load(ctx, fixture.token, table, { fileName: 'fine.json', content: fine, autodetect: true });
    expect(job).toMatchObject({ status: 'Completed', statistics: { rows_loaded: 1 } });
  });

  it('autodetects an object of 250 keys as 250 columns, with their values', async () => {
    const table = await fixture.table([{ name: 'x', type: 'STRING' }]);
    const row = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`k${i}`, i * n])));
    const job = await load(ctx, fixture.token, table, {
      fileName: 'wide.json',
      content: `${row(1)}\n${row(2)}\n`,
      autodetect: true,
    });
    expect(job).toMatchObject({ status: 'Completed', statistics: { rows_loaded: 2 } });
    const schema = await schemaOf(ctx, fixture.token, table);
    expect(schema).toHaveLength(250);
    expect(schema[249]).toMatchObject({ name: 'k249', type: 'INT64' });
    const rows = await rowsOf(ctx, fixture, table);
    expect(rows.map((loaded) => loaded.k249)).toEqual(['249', '498']);
  });
});

describe('Avro', () => {
  const schema = {
    type: 'record',
    name: 'Person',
    fields: [
      { name: 'id', type: 'long' },
      { name: 'name', type: ['null', 'string'] },
      { name: 'score', type: ['null', 'double'] },
    ],
  };

  it('loads the records of an Avro file by field name', async () => {
    const table = await fixture.table(people);
    const file = await avroFile(schema, [
      { id: 1, name: 'Ada', score: 1.5 },
      { id: 2, name: 'Grace', score: null },
    ]);
    expect(await load(ctx, fixture.token, table, { fileName: 'people.avro', content: file })).toMatchObject({
      status: 'Completed',
      source_format: 'AVRO',
      statistics: { rows_loaded: 2 },
    });
    expect(await rowsOf(ctx, fixture, table)).toEqual(PEOPLE_ROWS);
  });

  it('autodetects the columns from the Avro schema: a union with null is NULLABLE, anything else REQUIRED', async () => {
    const table = await fixture.table([{ name: 'old', type: 'STRING' }]);
    const file = await avroFile(
      {
        type: 'record',
        name: 'Event',
        fields: [
          ...schema.fields,
          { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
          { name: 'raw', type: 'bytes' },
          { name: 'tags', type: { type: 'array', items: 'string' } },
        ],
      },
      [{ id: 7, name: null, score: 2, at: Date.UTC(2026, 10, 23, 10), raw: Buffer.from('hi'), tags: ['a'] }],
    );
    const job = await load(ctx, fixture.token, table, { fileName: 'events.avro', content: file, autodetect: true });
    expect(job.status).toBe('Completed');
    expect(await schemaOf(ctx, fixture.token, table)).toEqual([
      { name: 'id', type: 'INT64', mode: 'REQUIRED', private: false },
      { name: 'name', type: 'STRING', mode: 'NULLABLE', private: false },
      { name: 'score', type: 'FLOAT64', mode: 'NULLABLE', private: false },
      { name: 'at', type: 'TIMESTAMP', mode: 'REQUIRED', private: false },
      { name: 'raw', type: 'BYTES', mode: 'REQUIRED', private: false },
      { name: 'tags', type: 'STRING', mode: 'REPEATED', private: false },
    ]);
    expect(await rowsOf(ctx, fixture, table)).toEqual([
      { id: '7', name: null, score: 2, at: '2026-11-23 10:00:00+00', raw: 'hi', tags: ['a'] },
    ]);
  });
});

describe('Parquet', () => {
  it('loads a Parquet file (.parquet, .pqt) by column name', async () => {
    const table = await fixture.table(people);
    const file = await parquetFile(`SELECT * FROM (VALUES (1, 'Ada', 1.5), (2, 'Grace', NULL)) AS t(id, name, score)`);
    for (const fileName of ['a.parquet', 'b.pqt']) {
      expect(await load(ctx, fixture.token, table, { fileName, content: file })).toMatchObject({
        status: 'Completed',
        source_format: 'PARQUET',
        statistics: { rows_loaded: 2 },
      });
    }
    expect(await rowsOf(ctx, fixture, table)).toEqual([...PEOPLE_ROWS, ...PEOPLE_ROWS]);
  });
});

describe('ORC', () => {
  it('fails on DuckDB with a clear reason, loading nothing', async () => {
    const table = await fixture.table(people);
    const job = await load(ctx, fixture.token, table, { fileName: 'people.orc', content: 'ORC...' });
    expect(job).toMatchObject({
      status: 'Failed',
      statistics: { rows_loaded: 0 },
      error_details: { message: expect.stringMatching(/^ORC needs the BigQuery warehouse/), problems: [], problem_count: 0 },
    });
  });
});

describe('write dispositions', () => {
  it('WRITE_APPEND adds rows, WRITE_TRUNCATE replaces them, WRITE_EMPTY loads only into an empty table', async () => {
    const table = await fixture.table(people);
    const csv = (...ids: number[]) => ids.map((id) => `${id},n${id},`).join('\n');
    expect(
      (await load(ctx, fixture.token, table, { fileName: 'a.csv', content: csv(1, 2), write_disposition: 'WRITE_EMPTY' })).status,
    ).toBe('Completed');
    expect((await load(ctx, fixture.token, table, { fileName: 'a.csv', content: csv(3) })).write_disposition).toBe(
      'WRITE_APPEND',
    );
    expect((await rowsOf(ctx, fixture, table)).map((row) => row.id)).toEqual(['1', '2', '3']);

    const refused = await load(ctx, fixture.token, table, {
      fileName: 'a.csv',
      content: csv(9),
      write_disposition: 'WRITE_EMPTY',
    });
    expect(refused).toMatchObject({ status: 'Failed', error_details: { message: expect.stringContaining('WRITE_EMPTY') } });
    expect((await rowsOf(ctx, fixture, table)).map((row) => row.id)).toEqual(['1', '2', '3']);

    const truncate = await load(ctx, fixture.token, table, {
      fileName: 'a.csv',
      content: csv(4, 5),
      write_disposition: 'WRITE_TRUNCATE',
    });
    expect(truncate).toMatchObject({ status: 'Completed', statistics: { rows_loaded: 2 } });
    expect((await rowsOf(ctx, fixture, table)).map((row) => row.id)).toEqual(['4', '5']);
  });
});

describe('autodetect', () => {
  it('infers types, modes and names from a CSV header, and replaces the whole schema (a column gone takes its private flag along)', async () => {
    const table = await fixture.table([{ name: 'secret', type: 'STRING', mode: 'REQUIRED', private: true }]);
    const job = await load(ctx, fixture.token, table, {
      fileName: 'inferred.csv',
      content: 'id,full name,joined,active,ratio\n1,Ada,2026-01-02,true,0.5\n2,,2026-01-03,false,1\n',
      autodetect: true,
    });
    expect(job).toMatchObject({ status: 'Completed', autodetect: true, statistics: { rows_loaded: 2 } });
    expect(await schemaOf(ctx, fixture.token, table)).toEqual([
      { name: 'id', type: 'INT64', mode: 'REQUIRED', private: false },
      { name: 'full_name', type: 'STRING', mode: 'NULLABLE', private: false },
      { name: 'joined', type: 'DATE', mode: 'REQUIRED', private: false },
      { name: 'active', type: 'BOOL', mode: 'REQUIRED', private: false },
      { name: 'ratio', type: 'FLOAT64', mode: 'REQUIRED', private: false },
    ]);
    expect(await rowsOf(ctx, fixture, table)).toEqual([
      { id: '1', full_name: 'Ada', joined: '2026-01-02', active: true, ratio: 0.5 },
      { id: '2', full_name: null, joined: '2026-01-03', active: false, ratio: 1 },
    ]);
  });

  it('infers from JSON (lists are REPEATED, objects JSON) and Parquet', async () => {
    const fromJson = await fixture.table([{ name: 'x', type: 'STRING' }]);
    const json = '{"id": 1, "tags": ["a"], "meta": {"k": 1}}\n{"id": 2, "tags": [], "meta": null}\n';
    expect((await load(ctx, fixture.token, fromJson, { fileName: 'a.ndjson', content: json, autodetect: true })).status).toBe(
      'Completed',
    );
    expect(await schemaOf(ctx, fixture.token, fromJson)).toEqual([
      { name: 'id', type: 'INT64', mode: 'REQUIRED', private: false },
      { name: 'tags', type: 'STRING', mode: 'REPEATED', private: false },
      { name: 'meta', type: 'JSON', mode: 'NULLABLE', private: false },
    ]);

    const fromParquet = await fixture.table([{ name: 'x', type: 'STRING' }]);
    const parquet = await parquetFile(`SELECT 1::BIGINT AS id, 'a' AS name, TIMESTAMPTZ '2026-11-23 10:00:00+00' AS at`);
    expect(
      (await load(ctx, fixture.token, fromParquet, { fileName: 'a.parquet', content: parquet, autodetect: true })).status,
    ).toBe('Completed');
    expect(await schemaOf(ctx, fixture.token, fromParquet)).toEqual([
      { name: 'id', type: 'INT64', mode: 'REQUIRED', private: false },
      { name: 'name', type: 'STRING', mode: 'REQUIRED', private: false },
      { name: 'at', type: 'TIMESTAMP', mode: 'REQUIRED', private: false },
    ]);
  });

  it('on a table that keeps its rows (WRITE_APPEND), takes new columns but refuses a change the rows cannot take', async () => {
    const table = await fixture.table([{ name: 'id', type: 'INT64' }]);
    await load(ctx, fixture.token, table, { fileName: 'a.csv', content: '1\n2\n' });
    const added = await load(ctx, fixture.token, table, { fileName: 'b.csv', content: 'id,extra\n3,\n', autodetect: true });
    expect(added.status).toBe('Completed');
    expect((await schemaOf(ctx, fixture.token, table)).map((field: { name: string }) => field.name)).toEqual(['id', 'extra']);

    const retyped = await load(ctx, fixture.token, table, { fileName: 'c.csv', content: 'id\nabc\n', autodetect: true });
    expect(retyped).toMatchObject({ status: 'Failed', error_details: { message: expect.stringContaining('WRITE_TRUNCATE') } });
    expect((await schemaOf(ctx, fixture.token, table)).map((field: { type: string }) => field.type)).toEqual(['INT64', 'STRING']);
    expect(await rowsOf(ctx, fixture, table)).toHaveLength(3);

    const replaced = await load(ctx, fixture.token, table, {
      fileName: 'c.csv',
      content: 'id\nabc\n',
      autodetect: true,
      write_disposition: 'WRITE_TRUNCATE',
    });
    expect(replaced.status).toBe('Completed');
    expect(await rowsOf(ctx, fixture, table)).toEqual([{ id: 'abc' }]);
  });
});
