/** The GoogleSQL tokenizer and table rewrite of query jobs on BigQuery, and the pure rules around the dry run. */
import { catalogKey, type ReadableCatalog } from '../../src/adapters/warehouse/query/analyze.js';
import {
  checkDryRun,
  extractSettings,
  googleSqlType,
  isoFromMicros,
  jsonValue,
  maskingSql,
  parseType,
  privateColumns,
} from '../../src/adapters/warehouse/query/bigquery-rules.js';
import { rewriteTables, tokenize } from '../../src/adapters/warehouse/query/googlesql.js';
import { QueryFailure } from '../../src/adapters/warehouse/query/interface.js';
import { physicalNames, type TableRef } from '../../src/adapters/warehouse/index.js';

const people = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290a', tableId: '01a209a3-8879-7269-8cc5-65c132e568d9' };
const orders = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290b', tableId: '01a209a3-8879-7269-8cc5-65c132e568da' };
const catalog: ReadableCatalog = new Map([
  [
    catalogKey('hr', 'people'),
    {
      ref: people,
      columns: [
        { name: 'name', type: 'STRING', repeated: false, masked: false },
        { name: 'salary', type: 'INT64', repeated: false, masked: true },
      ],
    },
  ],
  [catalogKey('Sales', 'Orders'), { ref: orders, columns: [{ name: 'id', type: 'INT64', repeated: false, masked: false }] }],
  [catalogKey('dup', 'x'), null],
]);
const physical = (ref: TableRef) => ({ project: 'proj', ...physicalNames(ref) });
const P = `\`proj.${physicalNames(people).dataset}.${physicalNames(people).table}\``;
const O = `\`proj.${physicalNames(orders).dataset}.${physicalNames(orders).table}\``;

function rewritten(sql: string): string {
  return rewriteTables(sql, catalog, physical).sql;
}

function refusal(sql: string): string {
  try {
    rewriteTables(sql, catalog, physical);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryFailure);
    return `${(error as QueryFailure).reason}: ${(error as QueryFailure).message}`;
  }
  throw new Error(`not refused: ${sql}`);
}

describe('tokenize', () => {
  it.each([
    ["'it''s'", ['string', 'string']],
    ["'a\\'b' x", ['string', 'space', 'word']],
    ['"a\\"b"', ['string']],
    ["'''multi\nline ' '' ''' x", ['string', 'space', 'word']],
    ['"""a "" b"""', ['string']],
    [
      "r'\\d+' R\"x\" b'by' rb'raw' BR'x'",
      ['string', 'space', 'string', 'space', 'string', 'space', 'string', 'space', 'string'],
    ],
    ['`a.b`.`c` x', ['quoted', 'symbol', 'quoted', 'space', 'word']],
    ['`a\\`b`', ['quoted']],
    ['-- c\nx # d\n/* e\n*/y', ['comment', 'space', 'word', 'space', 'comment', 'space', 'comment', 'word']],
    ['1.5e3 0x1F .5 12abc', ['number', 'space', 'number', 'space', 'number', 'space', 'number']],
  ])('%j', (sql, kinds) => {
    const tokens = tokenize(sql);
    expect(tokens.map((token) => token.kind)).toEqual(kinds);
    expect(tokens.map((token) => token.text).join('')).toBe(sql);
  });

  it.each(["'open", '"""open', '`open', '/* open', "'no\nnewline'"])('refuses %j as invalid', (sql) => {
    expect(() => tokenize(sql)).toThrow(QueryFailure);
  });
});

describe('rewriteTables', () => {
  it.each([
    ['SELECT name FROM hr.people', `SELECT name FROM ${P}`],
    ['SELECT * FROM `hr.people` p', `SELECT * FROM ${P} p`],
    ['SELECT * FROM `hr`.`people`', `SELECT * FROM ${P}`],
    ['SELECT * FROM HR . /* c */ People', `SELECT * FROM ${P}`],
    ['SELECT * FROM sales.orders o JOIN hr.people p ON p.name = o.id', `SELECT * FROM ${O} o JOIN ${P} p ON p.name = o.id`],
    ['SELECT * FROM sales.orders, hr.people', `SELECT * FROM ${O}, ${P}`],
    ['SELECT * FROM (SELECT 1 AS x) AS s, hr.people WHERE s.x = 1', `SELECT * FROM (SELECT 1 AS x) AS s, ${P} WHERE s.x = 1`],
    ['WITH x AS (SELECT * FROM hr.people) SELECT * FROM x', `WITH x AS (SELECT * FROM ${P}) SELECT * FROM x`],
    ['SELECT * FROM hr.people AS p, p.tags', `SELECT * FROM ${P} AS p, p.tags`],
    ['SELECT * FROM hr.people, UNNEST([1, 2]) AS n', `SELECT * FROM ${P}, UNNEST([1, 2]) AS n`],
    ['SELECT (SELECT MAX(salary) FROM hr.people) AS top', `SELECT (SELECT MAX(salary) FROM ${P}) AS top`],
    ['SELECT name FROM hr.people UNION ALL SELECT name FROM hr.people', `SELECT name FROM ${P} UNION ALL SELECT name FROM ${P}`],
    // Names inside strings and comments are no tables.
    ["SELECT 'FROM secret.data' AS s FROM hr.people", `SELECT 'FROM secret.data' AS s FROM ${P}`],
    [
      'SELECT """ FROM secret.data """ -- FROM secret.data\nFROM hr.people',
      `SELECT """ FROM secret.data """ -- FROM secret.data\nFROM ${P}`,
    ],
    ["SELECT r'\\' FROM secret.data' FROM hr.people", `SELECT r'\\' FROM secret.data' FROM ${P}`],
    ['SELECT 1 # FROM secret.data', 'SELECT 1'],
    // FROM that is no FROM clause.
    ['SELECT EXTRACT(DAY FROM p.born) FROM hr.people p', `SELECT EXTRACT(DAY FROM p.born) FROM ${P} p`],
    ['SELECT a IS DISTINCT FROM b.c FROM hr.people b', `SELECT a IS DISTINCT FROM b.c FROM ${P} b`],
    // Commas outside a FROM list are no table separators.
    [
      'SELECT name, salary FROM hr.people WHERE name IN (SELECT name FROM hr.people) ORDER BY name, salary',
      `SELECT name, salary FROM ${P} WHERE name IN (SELECT name FROM ${P}) ORDER BY name, salary`,
    ],
    ['SELECT 1;', 'SELECT 1'],
  ])('%s', (sql, expected) => {
    expect(rewritten(sql)).toBe(expected);
  });

  it('rewrites the targets of statements other than SELECT, for the dry run to name their type', () => {
    expect(rewritten('INSERT INTO sales.orders VALUES (1)')).toBe(`INSERT INTO ${O} VALUES (1)`);
    expect(rewritten('INSERT sales.orders (id) SELECT 1')).toBe(`INSERT ${O} (id) SELECT 1`);
    expect(rewritten('DELETE sales.orders WHERE true')).toBe(`DELETE ${O} WHERE true`);
    expect(rewritten('UPDATE sales.orders SET id = 1 WHERE true')).toBe(`UPDATE ${O} SET id = 1 WHERE true`);
  });

  it.each([
    [
      'SELECT * FROM secret.data',
      'accessDenied: Table "secret.data" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'SELECT * FROM `secret.data`',
      'accessDenied: Table "secret.data" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'SELECT * FROM hr.people, secret.data',
      'accessDenied: Table "secret.data" is not one this query\'s project may read (or does not exist)',
    ],
    [
      'SELECT * FROM hr.people JOIN `secret`.`data` USING (name)',
      'accessDenied: Table "secret.data" is not one this query\'s project may read (or does not exist)',
    ],
    ['SELECT * FROM dup.x', 'accessDenied: "dup.x" is ambiguous: two datasets this project reads are named "dup"'],
    [
      'SELECT * FROM people',
      'accessDenied: Unknown table "people": name tables as dataset_name.table_name, of the datasets this query\'s project may read',
    ],
    ['SELECT * FROM proj.hr.people', 'accessDenied: Tables are named dataset_name.table_name; "proj.hr.people" is not readable'],
    [
      'SELECT * FROM my-project.hr.people',
      'accessDenied: Tables are named dataset_name.table_name; "my-project.hr.people" is not readable',
    ],
    [
      'SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS',
      'accessDenied: Tables are named dataset_name.table_name; "region-us.INFORMATION_SCHEMA.JOBS" is not readable',
    ],
    [
      'SELECT * FROM collab_results.r_1',
      'accessDenied: Table "collab_results.r_1" is not one this query\'s project may read (or does not exist)',
    ],
    [
      "SELECT * FROM EXTERNAL_QUERY('c', 'SELECT 1')",
      'accessDenied: Table functions are not allowed (EXTERNAL_QUERY): a query reads tables only',
    ],
    [
      'SELECT * FROM ML.PREDICT(MODEL m, TABLE hr.people)',
      'accessDenied: Table functions are not allowed (ML.PREDICT): a query reads tables only',
    ],
    [
      'SELECT 1; SELECT * FROM hr.people',
      'accessDenied: A query is exactly one SELECT statement: scripts and several statements are refused',
    ],
    [
      'SELECT 1; -- c\n DROP TABLE hr.people',
      'accessDenied: A query is exactly one SELECT statement: scripts and several statements are refused',
    ],
    [
      "SELECT ' ; ' ; SELECT 2",
      'accessDenied: A query is exactly one SELECT statement: scripts and several statements are refused',
    ],
  ])('refuses %s', (sql, expected) => {
    expect(refusal(sql)).toBe(expected);
  });
});

describe('dry-run rules', () => {
  const ref = (ids: TableRef) => ({
    projectId: 'proj',
    datasetId: physicalNames(ids).dataset,
    tableId: physicalNames(ids).table,
  });

  it('passes one SELECT of readable tables, saying whether one has masked columns (and so analysis rules)', () => {
    expect(checkDryRun({ statementType: 'SELECT', referencedTables: [ref(orders)] }, catalog, physical)).toEqual({
      readsMasked: false,
      readsRuled: false,
    });
    expect(checkDryRun({ statementType: 'SELECT', referencedTables: [ref(orders), ref(people)] }, catalog, physical)).toEqual({
      readsMasked: true,
      readsRuled: true,
    });
  });

  it('refuses other statements, scripts and tables outside the catalog', () => {
    const refused = (statistics: Parameters<typeof checkDryRun>[0]) => {
      try {
        checkDryRun(statistics, catalog, physical);
        return 'passed';
      } catch (error) {
        return (error as QueryFailure).message;
      }
    };
    expect(refused({ statementType: 'INSERT' })).toBe('Only a SELECT may run: this is a INSERT statement');
    expect(refused({ statementType: 'CREATE_TABLE_AS_SELECT' })).toBe(
      'Only a SELECT may run: this is a CREATE TABLE AS SELECT statement',
    );
    expect(refused({ statementType: 'SCRIPT' })).toMatch(/scripts and several statements are refused/);
    const other = { projectId: 'proj', datasetId: 'collab_results', tableId: 'r_x' };
    expect(refused({ statementType: 'SELECT', referencedTables: [ref(orders), other] })).toMatch(/outside the datasets/);
    expect(refused({ statementType: 'SELECT', referencedTables: [{ ...ref(orders), projectId: 'elsewhere' }] })).toMatch(
      /outside the datasets/,
    );
  });

  it('takes the DuckDB lineage when it lines up with the schema, else the conservative rule', () => {
    const fields = [
      { name: 'name', type: 'STRING' },
      { name: 'f0_', type: 'INTEGER' },
    ];
    expect(privateColumns(fields, { masked: [false, true], names: ['name', ''] }, true)).toEqual([false, true]);
    expect(privateColumns(fields, { masked: [false], names: ['name'] }, true)).toEqual([true, true]);
    expect(privateColumns(fields, { masked: [false, false], names: ['other', ''] }, true)).toEqual([true, true]);
    expect(privateColumns(fields, undefined, true)).toEqual([true, true]);
    expect(privateColumns(fields, undefined, false)).toEqual([false, false]);
  });

  it('stores a masked result through a positional UNION ALL', () => {
    expect(
      maskingSql('SELECT a, b FROM t', [
        { name: 'a', type: 'STRING', private: false },
        { name: 'f0_', type: 'INT64', private: true },
      ]),
    ).toBe(
      'SELECT c0 AS `a`, CAST(NULL AS INT64) AS `f0_`, (c1 IS NOT NULL) AS _collab_masked_row\n' +
        'FROM ((SELECT CAST(NULL AS STRING) AS c0, CAST(NULL AS INT64) AS c1 LIMIT 0) UNION ALL (\nSELECT a, b FROM t\n))',
    );
  });
});

describe('result values', () => {
  it('spells types as CAST takes them and reads them back', () => {
    const field = {
      type: 'RECORD',
      mode: 'REPEATED',
      fields: [
        { name: 'n', type: 'INTEGER' },
        { name: 'odd`name', type: 'STRING', mode: 'REPEATED' },
      ],
    };
    const type = googleSqlType(field);
    expect(type).toBe('ARRAY<STRUCT<`n` INT64, `odd\\`name` ARRAY<STRING>>>');
    expect(parseType(type)).toEqual({
      kind: 'array',
      of: {
        kind: 'struct',
        fields: [
          { name: 'n', type: { kind: 'scalar', name: 'INT64' } },
          { name: 'odd`name', type: { kind: 'array', of: { kind: 'scalar', name: 'STRING' } } },
        ],
      },
    });
    expect(parseType('NUMERIC(10, 2)')).toEqual({ kind: 'scalar', name: 'NUMERIC' });
  });

  it.each([
    ['INT64', '42', 42],
    ['INT64', '9007199254740993', '9007199254740993'],
    ['FLOAT64', '-2.25', -2.25],
    ['FLOAT64', 'NaN', 'NaN'],
    ['BOOL', 'false', false],
    ['STRING', 'x', 'x'],
    ['NUMERIC', '1.50', '1.50'],
    ['TIMESTAMP', '1700000000123456', '2023-11-14T22:13:20.123456Z'],
    ['INT64', null, null],
    ['ARRAY<INT64>', [{ v: '1' }, { v: '2' }], [1, 2]],
    ['STRUCT<`a` BOOL, `b` ARRAY<STRING>>', { f: [{ v: 'true' }, { v: [{ v: 'x' }] }] }, { a: true, b: ['x'] }],
  ])('%s %j', (type, value, expected) => {
    expect(jsonValue(value, parseType(type))).toEqual(expected);
  });

  it('writes timestamps before 1970 too', () => {
    expect(isoFromMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
  });

  it('exports what BigQuery can compress, and says what it cannot', () => {
    expect(extractSettings('JSON', 'GZIP')).toEqual({ destinationFormat: 'NEWLINE_DELIMITED_JSON', compression: 'GZIP' });
    expect(extractSettings('AVRO', 'DEFLATE')).toEqual({ destinationFormat: 'AVRO', compression: 'DEFLATE' });
    expect(() => extractSettings('CSV', 'DEFLATE')).toThrow(
      'BigQuery cannot export CSV with DEFLATE compression: choose GZIP or NONE',
    );
    expect(() => extractSettings('AVRO', 'GZIP')).toThrow(
      'BigQuery cannot export AVRO with GZIP compression: choose DEFLATE or NONE',
    );
    expect(() => extractSettings('PARQUET', 'DEFLATE')).toThrow(/choose GZIP or NONE/);
  });
});
