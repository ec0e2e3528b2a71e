import { existsSync } from 'node:fs';
import { physicalNames } from '../../src/adapters/warehouse/index.js';
import { createTestContext, type TestContext } from '../context.js';
import { queryFixture, type QueryFixture, runToEnd } from './helpers.js';

let ctx: TestContext;
let mine: QueryFixture;
let theirs: QueryFixture;
let theirTable: string;

beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_QUERY_TIMEOUT_SECONDS: '2' });
  await ctx.startWorker();
  mine = await queryFixture(ctx, 'Mine', 'sales');
  const orders = await mine.table('orders', [
    { name: 'id', type: 'INT64' },
    { name: 'note', type: 'STRING' },
  ]);
  await mine.fill(orders, "INSERT INTO {table} SELECT range, 'n' FROM range(10)");
  theirs = await queryFixture(ctx, 'Theirs', 'secret');
  theirTable = await theirs.table('data', [{ name: 'value', type: 'STRING' }]);
  await theirs.fill(theirTable, "INSERT INTO {table} VALUES ('confidential')");
}, 60_000);

afterAll(() => ctx?.close());

const attackFile = '/tmp/collab-query-attack';

/** Every spelling of reading what the project may not, or of doing anything but reading. */
function attacks(): Record<string, string> {
  const { dataset, table } = physicalNames({ datasetId: theirs.datasetId, tableId: theirTable });
  return {
    "another tenant's table": 'SELECT * FROM secret.data',
    'quoted names': 'SELECT * FROM "secret"."data"',
    'comments and odd spacing': 'SELECT * FROM /* x */ secret . data -- y',
    'its physical name': `SELECT * FROM ${dataset}.${table}`,
    'its physical name, quoted': `SELECT * FROM "${dataset}"."${table}"`,
    'a catalog-qualified name': `SELECT * FROM warehouse.${dataset}.${table}`,
    'a CTE around it': 'WITH x AS (SELECT * FROM secret.data) SELECT * FROM x',
    'a CTE shadowing an own table': 'WITH orders AS (SELECT * FROM secret.data) SELECT * FROM orders',
    'a scalar subquery': 'SELECT (SELECT max(value) FROM secret.data) AS v',
    'EXISTS over a system view': 'SELECT 1 WHERE EXISTS (SELECT 1 FROM information_schema.tables)',
    'a union': 'SELECT note FROM sales.orders UNION ALL SELECT value FROM secret.data',
    'a lateral join': 'SELECT * FROM sales.orders, LATERAL (SELECT * FROM secret.data) AS s',
    'read_csv of a file': "SELECT * FROM read_csv('/etc/passwd')",
    'a file name as a table': "SELECT * FROM '/etc/passwd'",
    read_text: "SELECT * FROM read_text('/etc/passwd')",
    glob: "SELECT * FROM glob('/etc/*')",
    'query()': "SELECT * FROM query('SELECT * FROM secret.data')",
    'query_table()': "SELECT * FROM query_table('secret.data')",
    'duckdb_tables()': 'SELECT * FROM duckdb_tables()',
    'duckdb_tables view': 'SELECT * FROM duckdb_tables',
    information_schema: 'SELECT * FROM information_schema.tables',
    pg_catalog: 'SELECT * FROM pg_catalog.pg_class',
    sqlite_master: 'SELECT * FROM sqlite_master',
    current_setting: "SELECT current_setting('temp_directory') AS t",
    getenv: "SELECT getenv('HOME') AS h",
    current_query: 'SELECT current_query() AS q',
    'a system-qualified function': 'SELECT main.version() AS v',
    INSERT: "INSERT INTO sales.orders VALUES (99, 'x')",
    UPDATE: "UPDATE sales.orders SET note = 'x'",
    DELETE: 'DELETE FROM sales.orders',
    'CREATE TABLE AS': 'CREATE TABLE sales.copy AS SELECT * FROM secret.data',
    DROP: 'DROP TABLE sales.orders',
    ATTACH: `ATTACH '${attackFile}.db' AS x`,
    COPY: `COPY sales.orders TO '${attackFile}.csv'`,
    'COPY of a query': `COPY (SELECT * FROM secret.data) TO '${attackFile}.csv'`,
    'EXPORT DATABASE': `EXPORT DATABASE '${attackFile}'`,
    PRAGMA: 'PRAGMA database_list',
    SET: 'SET enable_external_access = true',
    INSTALL: 'INSTALL httpfs',
    LOAD: 'LOAD httpfs',
    CHECKPOINT: 'CHECKPOINT',
    CALL: 'CALL pragma_version()',
    'two statements': 'SELECT 1; DROP TABLE sales.orders',
    'two SELECTs': 'SELECT 1; SELECT * FROM secret.data',
    DESCRIBE: 'DESCRIBE secret.data',
    'an unknown bare name': 'SELECT * FROM data',
  };
}

describe('isolation', () => {
  it('fails every attack with a clear error, and nothing is read, written or created', async () => {
    const outcomes: Record<string, unknown> = {};
    for (const [name, text] of Object.entries(attacks())) {
      const job = await runToEnd(ctx, mine, mine.tenant, text);
      outcomes[name] = {
        status: job.status,
        reason: job.error_result?.reason,
        clear: typeof job.error_result?.message === 'string' && job.error_result.message.length > 10,
      };
      expect(JSON.stringify(job)).not.toMatch(/confidential|\/tmp\/|\.duckdb|ds_[0-9a-f]{8}_/);
    }
    const expected = Object.fromEntries(
      Object.keys(outcomes).map((name) => [
        name,
        { status: 'FAILED', reason: expect.stringMatching(/^(accessDenied|invalidQuery)$/), clear: true },
      ]),
    );
    expect(outcomes).toEqual(expected);
    const count = await runToEnd(ctx, mine, mine.tenant, 'SELECT count(*) AS n FROM sales.orders');
    const page = await mine.api.get(`/api/v1/query-jobs/${count.id}/results`);
    expect(page.body.rows).toEqual([{ data: { n: 10 } }]);
    for (const suffix of ['.db', '.csv', '']) expect(existsSync(`${attackFile}${suffix}`)).toBe(false);
    // 46 jobs one after another: some 25 s alone, more beside another test file.
  }, 120_000);

  it('names the table a query may not read', async () => {
    const job = await runToEnd(ctx, mine, mine.tenant, 'SELECT * FROM secret.data');
    expect(job.error_result).toEqual({
      reason: 'accessDenied',
      message: 'Table "secret.data" is not one this query\'s project may read (or does not exist)',
    });
    const write = await runToEnd(ctx, mine, mine.tenant, 'DELETE FROM sales.orders');
    expect(write.error_result.message).toMatch(/Only a SELECT may run/);
  });

  it('stops a query that runs longer than COLLAB_QUERY_TIMEOUT_SECONDS', async () => {
    const tables = Array.from({ length: 12 }, (_, i) => `sales.orders t${i}`).join(', ');
    const started = Date.now();
    const job = await runToEnd(ctx, mine, mine.tenant, `SELECT count(*) AS n FROM ${tables}`);
    expect(job).toMatchObject({
      status: 'FAILED',
      error_result: { reason: 'timeout', message: 'The query ran longer than 2 s and was stopped' },
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('runs ordinary SQL: list and struct literals, recursive CTEs, rows made by range and unnest', async () => {
    const cases: [string, Record<string, unknown>[]][] = [
      ['SELECT [1, 2, 3] AS l', [{ l: [1, 2, 3] }]],
      ["SELECT {'a': 1} AS s", [{ s: { a: 1 } }]],
      [
        'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r ORDER BY n',
        [{ n: 1 }, { n: 2 }, { n: 3 }],
      ],
      ['SELECT count(*) AS n FROM range(4), unnest([1, 2]), sales.orders WHERE id < 1', [{ n: 8 }]],
      ['SELECT list_transform([1, 2], x -> x * CAST(id AS INTEGER)) AS l FROM sales.orders WHERE id = 2', [{ l: [2, 4] }]],
    ];
    for (const [text, rows] of cases) {
      const job = await runToEnd(ctx, mine, mine.tenant, text);
      expect({ text, status: job.status, error: job.error_result }).toEqual({ text, status: 'DONE', error: null });
      const page = await mine.api.get(`/api/v1/query-jobs/${job.id}/results`);
      expect({ text, rows: page.body.rows.map((row: { data: object }) => row.data) }).toEqual({ text, rows });
    }
  });

  it('runs what a project may read, however it is spelled', async () => {
    for (const text of [
      'SELECT count(*) AS n FROM "SALES"."Orders"',
      'WITH o AS (SELECT * FROM sales.orders) SELECT count(*) AS n FROM o',
      'SELECT count(*) AS n FROM sales.orders a JOIN sales.orders b USING (id) WHERE a.id IN (SELECT id FROM sales.orders)',
      '/* leading comment */ SELECT count(*) AS n FROM sales . orders -- trailing',
      "SELECT count(*) AS n FROM (VALUES (1), (2)) v(x), sales.orders WHERE note = 'n' AND x = 1",
    ]) {
      const job = await runToEnd(ctx, mine, mine.tenant, text);
      expect({ text, status: job.status, error: job.error_result }).toEqual({ text, status: 'DONE', error: null });
      const page = await mine.api.get(`/api/v1/query-jobs/${job.id}/results`);
      expect(page.body.rows).toEqual([{ data: { n: 10 } }]);
    }
  });
});
