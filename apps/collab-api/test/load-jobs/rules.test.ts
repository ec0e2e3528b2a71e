/** The pure rules of loading: value checks (run in DuckDB), inferred columns, CSV headers, file names. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';
import type { Field, FieldType } from '../../src/adapters/warehouse/index.js';
import { decimalText } from '../../src/adapters/warehouse/load/avro.js';
import { JsonDepth } from '../../src/adapters/warehouse/load/json.js';
import {
  acceptable,
  checkedValue,
  columnNames,
  columnValue,
  csvType,
  inferredField,
  inferredModes,
  keepingNullable,
} from '../../src/adapters/warehouse/load/rules.js';
import { matchColumns } from '../../src/adapters/warehouse/load/staging.js';
import { firstCsvRecord, firstRecordEnd, isHeader } from '../../src/load-jobs/csv-header.js';
import { formatOfFileName, keySafeFileName } from '../../src/load-jobs/formats.js';
import { keepingPrivateFlags } from '../../src/tables/fields.js';

const field = (type: FieldType, mode: Field['mode'] = 'NULLABLE'): Field => ({ name: 'v', type, mode, private: false });

describe('value rules, evaluated by DuckDB', () => {
  let instance: DuckDBInstance;
  let run: (sql: string) => Promise<unknown>;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    run = async (sql) => (await connection.runAndReadAll(`SELECT ${sql} AS v`)).getRowObjectsJson()[0]!.v;
  });
  afterAll(() => instance.closeSync());

  const fits = (f: Field, text: string | null) => run(acceptable(f, text === null ? 'NULL::VARCHAR' : quotedString(text)));

  it.each<[FieldType, string[], string[]]>([
    ['INT64', ['1', ' -42 ', '+7'], ['1.5', '1e3', 'x', '99999999999999999999']],
    ['FLOAT64', ['1.5', '-2e3', ' 3 '], ['x', '1,5']],
    // Exactly or not at all: the warehouse refuses a NUMERIC of more than 9 digits after the point.
    [
      'NUMERIC',
      ['12.345', '-0.5', '.5', '1.123456789', '1.1234567890000', '1e-9', '1.5e3'],
      ['x', '1.2.3', '1.1234567891', '1e-10'],
    ],
    ['BOOL', ['true', 'F', 'yes', 'n', '1', '0'], ['maybe', '2']],
    ['DATE', ['2026-11-23'], ['2026-13-01', 'today']],
    ['DATETIME', ['2026-11-23 10:00:00', '2026-11-23T10:00:00'], ['10:00']],
    ['TIMESTAMP', ['2026-11-23T10:00:00Z', '2026-11-23 10:00:00+02'], ['soon']],
    ['TIME', ['10:30:00', '10:30'], ['25:00:00']],
    ['BYTES', ['aGk=', ''], ['not base64!', 'aGk']],
    ['JSON', ['{"a":1}', '[1]', '"s"'], ['{a:1}']],
  ])('%s takes %j and refuses %j', async (type, good, bad) => {
    for (const text of good) expect({ text, fits: await fits(field(type), text) }).toEqual({ text, fits: true });
    for (const text of bad) expect({ text, fits: await fits(field(type), text) }).toEqual({ text, fits: false });
  });

  it('takes a missing value only where the mode allows it; a REPEATED column is a JSON array of its type', async () => {
    expect(await fits(field('STRING', 'NULLABLE'), null)).toBe(true);
    expect(await fits(field('STRING', 'REQUIRED'), null)).toBe(false);
    expect(await fits(field('INT64', 'REPEATED'), '[1, "2", 3]')).toBe(true);
    expect(await fits(field('INT64', 'REPEATED'), '[1, "x"]')).toBe(false);
    expect(await fits(field('INT64', 'REPEATED'), '[1, null]')).toBe(false);
    expect(await fits(field('INT64', 'REPEATED'), '7')).toBe(false);
    expect(await run(columnValue(field('INT64', 'REPEATED'), 'NULL::VARCHAR'))).toEqual([]);
    expect(await run(columnValue(field('BOOL'), "'Yes'"))).toBe(true);
    expect(await run(columnValue(field('BYTES'), "'aGk='"))).toBe('hi');
  });

  // insertCsv reads these types typed: the reading must refuse what the rules refuse, and read as they do.
  it.each<[FieldType, string[]]>([
    ['FLOAT64', ['1.5', ' 1.5 ', '1e3', '1_000.5', 'inf', 'NaN', '.5', '0x10', '1.5e', 'x']],
    ['BOOL', ['true', 'T', 'yes', 'N', ' true ', '01', '2', 'on', 'x']],
    ['DATE', ['2026-01-10', ' 2026-01-10 ', '2026-1-1', '2026-01-10 12:00:00', '20260110', '2026-02-30', 'infinity']],
    ['DATETIME', ['2026-01-10 12:00:00', '2026-01-10T12:00', '2026-01-10', '2026-01-10 12:00:00+02', '2026-01-10 12', 'x']],
    ['TIME', ['12:00:00', '12:00', '24:00:00', '12:00:00+02', '25:00:00', '12', '12:00:00.1234567']],
  ])('DuckDB’s typed CSV reading of %s refuses or reads as the rules do', async (type, texts) => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'collab-rules-')), 'v.csv');
    const f = field(type);
    for (const text of texts) {
      await writeFile(file, `v\n${text}\n`);
      const reading = `read_csv(${quotedString(file)}, header = true, auto_detect = false, columns = {'v': '${csvType(f)}'})`;
      const typed = await run(`(SELECT v::VARCHAR FROM ${reading})`).catch(() => 'refused');
      const v = quotedString(text);
      const rules = await run(`CASE WHEN ${acceptable(f, v)} THEN (${columnValue(f, v)})::VARCHAR ELSE 'refused' END`);
      if (typed !== 'refused') expect({ text, typed }).toEqual({ text, typed: rules });
    }
  });

  it('checks a value as it converts it, failing the statement where it does not fit', async () => {
    expect(await run(checkedValue(field('INT64'), "' 7 '", false))).toBe('7');
    expect(await run(checkedValue(field('INT64'), 'NULL::VARCHAR', false))).toBeNull();
    expect(await run(checkedValue(field('BOOL', 'REQUIRED'), 'true', true))).toBe(true);
    await expect(run(checkedValue(field('INT64'), "'1.5'", false))).rejects.toThrow('a value does not fit its column');
    await expect(run(checkedValue(field('DATE', 'REQUIRED'), 'NULL::DATE', true))).rejects.toThrow('a value does not fit');
    await expect(run(checkedValue(field('INT64', 'REPEATED'), `'[1, "x"]'`, false))).rejects.toThrow('a value does not fit');
  });
});

describe('autodetect', () => {
  it('maps DuckDB types to columns: lists REPEATED, nested values JSON', () => {
    expect(inferredField('a', 'BIGINT')).toEqual({ name: 'a', type: 'INT64', mode: 'NULLABLE', private: false });
    expect(inferredField('a', 'DECIMAL(18,3)').type).toBe('NUMERIC');
    // Decimals NUMERIC cannot hold exactly are their text (there is no BIGNUMERIC column).
    expect(inferredField('a', 'DECIMAL(18,12)').type).toBe('STRING');
    expect(inferredField('a', 'DECIMAL(38,0)').type).toBe('STRING');
    expect(inferredField('a', 'DECIMAL(38,9)').type).toBe('NUMERIC');
    expect(inferredField('a', 'TIMESTAMP WITH TIME ZONE').type).toBe('TIMESTAMP');
    expect(inferredField('a', 'TIMESTAMP').type).toBe('DATETIME');
    expect(inferredField('a', 'VARCHAR[]')).toMatchObject({ type: 'STRING', mode: 'REPEATED' });
    expect(inferredField('a', 'BIGINT[][]')).toMatchObject({ type: 'JSON', mode: 'NULLABLE' });
    expect(inferredField('a', 'STRUCT(x INTEGER)')).toMatchObject({ type: 'JSON', mode: 'NULLABLE' });
  });

  it('makes a column with a value in every row REQUIRED, and keeps NULLABLE what a table with rows has so', () => {
    const fields = [field('INT64'), { ...field('STRING'), name: 'w' }, { ...field('JSON', 'REPEATED'), name: 'r' }];
    expect(inferredModes(fields, [0, 2, 0], 5).map((f) => f.mode)).toEqual(['REQUIRED', 'NULLABLE', 'REPEATED']);
    expect(inferredModes(fields, [0, 0, 0], 0).map((f) => f.mode)).toEqual(['NULLABLE', 'NULLABLE', 'REPEATED']);
    expect(keepingNullable([field('INT64', 'REQUIRED')], [field('INT64', 'NULLABLE')])[0]!.mode).toBe('NULLABLE');
  });

  it('turns headings into column names', () => {
    expect(columnNames(['id', 'full name', '2nd', '', 'ID', '_TABLE_x', 'é'])).toEqual([
      'id',
      'full_name',
      'c_2nd',
      'column_4',
      'ID_2',
      'c__TABLE_x',
      '_',
    ]);
  });

  it('numbers 10,000 headings of one name in turn, around names the file gives itself (in linear time)', () => {
    const headings = Array.from({ length: 10_000 }, (_, i) => `a${String.fromCharCode(0x100 + i)}`);
    const names = columnNames(['a_3', ...headings]);
    expect(names.slice(0, 5)).toEqual(['a_3', 'a_', 'a__2', 'a__3', 'a__4']);
    expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(names.length);
    expect(columnNames(['x', 'x_2', 'X', 'x'])).toEqual(['x', 'x_2', 'X_3', 'x_4']);
  });
});

describe('matchColumns', () => {
  const fields: Field[] = [
    { name: 'id', type: 'INT64', mode: 'NULLABLE', private: false },
    { name: 'Name', type: 'STRING', mode: 'NULLABLE', private: false },
  ];

  it('matches file columns to the table’s in any case, and names a column the file has twice, whatever its case', () => {
    expect(matchColumns(['ID', 'name'], fields)).toEqual(
      new Map([
        ['id', 'ID'],
        ['Name', 'name'],
      ]),
    );
    expect(() => matchColumns(['ID', 'id'], fields)).toThrow(
      expect.objectContaining({ problems: [{ row: null, column: 'id', reason: 'the file has this column twice' }] }),
    );
  });
});

describe('JsonDepth', () => {
  const deepest = (...chunks: string[]) => {
    const depth = new JsonDepth();
    for (const chunk of chunks) depth.feed(Buffer.from(chunk));
    return depth.deepest;
  };

  it('counts arrays and objects, not brackets in strings, across chunks split anywhere', () => {
    expect(deepest('{"a": [1, {"b": []}]}')).toBe(4);
    expect(deepest('{"a": "[[[{{{", "b": "\\"[[["}')).toBe(1);
    expect(deepest('{"a": "x\\', '"[[", "b": [', '[]]}')).toBe(3);
    expect(deepest('[[[', ']]]\n[')).toBe(3);
  });

  it('starts every line afresh, even after a string or bracket left open', () => {
    expect(deepest('{"open: [[[\n[[]]\n')).toBe(2);
    expect(deepest('[[[[\n[]\n')).toBe(4);
  });
});

describe('CSV headers', () => {
  it('reads the first record of CSV text, quotes and a byte order mark included', () => {
    expect(firstCsvRecord('\uFEFFa,"b,c","d\n""e"""\nnext')).toEqual(['a', 'b,c', 'd\n"e"']);
    expect(firstCsvRecord('a,"open')).toBeUndefined();
    expect(firstCsvRecord('a,b', true)).toEqual(['a', 'b']);
  });

  it('finds where the first record ends, a chunk at a time, line breaks in quotes skipped', () => {
    const scan = { at: 0, quoted: false };
    let text = 'a,"b\n';
    expect(firstRecordEnd(text, scan)).toBe(-1);
    text += 'c""d",e';
    expect(firstRecordEnd(text, scan)).toBe(-1);
    text += '\r\nnext\n';
    expect(firstRecordEnd(text, scan)).toBe(text.indexOf('\r'));
    expect(firstCsvRecord(text.slice(0, scan.at + 1))).toEqual(['a', 'b\nc"d', 'e']);
  });

  it('takes a first record for a header when it names columns of the table, each once', () => {
    const fields = [{ name: 'id' }, { name: 'Name' }];
    expect(isHeader(['name', ' ID '], fields)).toBe(true);
    expect(isHeader(['1', 'Ada'], fields)).toBe(false);
    expect(isHeader(['id', 'id'], fields)).toBe(false);
  });
});

describe('file names', () => {
  it.each([
    ['a.csv', 'CSV'],
    ['a.JSON', 'JSON'],
    ['a.ndjson', 'JSON'],
    ['a.jsonl', 'JSON'],
    ['a.avro', 'AVRO'],
    ['a.parquet', 'PARQUET'],
    ['a.pqt', 'PARQUET'],
    ['a.orc', 'ORC'],
    ['a.txt', undefined],
    ['csv', undefined],
  ])('%s is %s', (name, format) => {
    expect(formatOfFileName(name)).toBe(format);
  });

  it('keeps object keys to safe characters', () => {
    expect(keySafeFileName('../../ét é.csv')).toBe('_.._t_.csv');
    expect(keySafeFileName('.hidden')).toBe('hidden');
    expect(keySafeFileName('')).toBe('upload');
  });
});

it('writes Avro decimals from their two’s-complement bytes', () => {
  expect(decimalText(Buffer.from([0x30, 0x39]), 2)).toBe('123.45');
  expect(decimalText(Buffer.from([0xff, 0x85]), 2)).toBe('-1.23');
  expect(decimalText(Buffer.from([0x05]), 3)).toBe('0.005');
});

it('keeps the private flag of every column a load finds again, whatever its case; new columns come in public', () => {
  const current: Field[] = [
    { name: 'Secret', type: 'STRING', mode: 'REQUIRED', private: true },
    { name: 'gone', type: 'STRING', mode: 'NULLABLE', private: true },
    { name: 'open', type: 'STRING', mode: 'NULLABLE', private: false },
  ];
  const found: Field[] = [
    { name: 'secret', type: 'INT64', mode: 'NULLABLE', private: false },
    { name: 'open', type: 'STRING', mode: 'NULLABLE', private: false },
    { name: 'new', type: 'STRING', mode: 'NULLABLE', private: false },
  ];
  expect(keepingPrivateFlags(found, current).map((column) => [column.name, column.private])).toEqual([
    ['secret', true],
    ['open', false],
    ['new', false],
  ]);
});
