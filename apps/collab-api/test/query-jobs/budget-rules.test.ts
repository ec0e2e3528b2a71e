/**
 * The pure rules of what one query may take and what it is charged: lists built from constants
 * (counted on DuckDB's own parse trees, from its sandbox), BigQuery's on-demand minimums, the
 * rounds of the queue, what a cancel does in each state, and DuckDB's sizes.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { billedBytes, MIN_BILLED_BYTES } from '../../src/adapters/warehouse/query/billing.js';
import { SANDBOX } from '../../src/adapters/warehouse/query/sandbox.js';
import { oversizedConstantList } from '../../src/adapters/warehouse/query/limits.js';
import { duckDbSizeBytes } from '../../src/adapters/warehouse/settings.js';
import { maxConstantListElements } from '../../src/memory/budget.js';
import { queuePriority } from '../../src/query-jobs/scheduling.js';
import { cancelEffect } from '../../src/query-jobs/states.js';

let sandbox: DuckDBInstance;
beforeAll(async () => {
  sandbox = await DuckDBInstance.create(':memory:', SANDBOX);
});
afterAll(() => sandbox.closeSync());

/** DuckDB's parse tree of `sql`, as the engine checks it. */
async function tree(sql: string): Promise<unknown> {
  const connection = await sandbox.connect();
  try {
    const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
    return JSON.parse(String(reader.getRows()[0]![0]));
  } finally {
    connection.closeSync();
  }
}

describe('lists built from constants', () => {
  const limits = { maxListElements: 1_000_000 };
  const refused = async (sql: string) => oversizedConstantList(await tree(sql), limits);

  it('refuses the memory bomb and range(1e9) before they run, saying why', async () => {
    expect(await refused('SELECT count(*) FROM (SELECT unnest(range(100000000)) x)')).toBe(
      'range(...) would build a list of 100,000,000 values from constants before the query runs; a query may build at most 1,000,000 so',
    );
    expect(await refused('SELECT count(*) FROM (SELECT unnest(range(1e9)) x)')).toMatch(/1,000,000,000 values/);
  });

  it('counts every spelling of a long constant list', async () => {
    for (const sql of [
      'SELECT range(10 * 1000 * 1000)',
      'SELECT range(-5, 2000000)',
      'SELECT range(0, 4000000, 2)',
      'SELECT generate_series(0, 1000000)',
      'SELECT range(CAST(5e6 AS BIGINT))',
      'SELECT len(list_resize([1], 2000000))',
      'SELECT repeat(range(1000), 2000)',
      "SELECT string_split(repeat('a,', 1000000), ',')",
      "SELECT range(TIMESTAMP '2000-01-01', TIMESTAMP '2200-01-01 00:00:00', INTERVAL 1 HOUR)",
      "SELECT generate_series(DATE '1900-01-01', DATE '2100-01-01', INTERVAL '1 minute')",
      'SELECT list_sort(range(3000000))',
      'SELECT [range(600000), range(600000)]',
      'SELECT * FROM (VALUES (1)) v(x) WHERE x IN (SELECT unnest(range(2000000)))',
      // A table function's arguments are folded like any others.
      'SELECT count(*) FROM unnest(range(2000000))',
      'SELECT count(*) FROM range(len(range(2000000)))',
      // Lambdas over constant lists, nested: each body runs once a value (some 2.7e9 calls folded, uninterruptible).
      'SELECT list_sum(list_transform(range(1400), x -> list_sum(list_transform(range(1400), y -> list_sum(list_transform(range(1400), z -> 1))))))',
      'SELECT list_transform(range(2000), x -> range(1000))',
      'SELECT list_filter(range(1500), x -> len(list_filter(range(1500), y -> x = y)) > 0)',
      'SELECT list_reduce(range(1100), (a, b) -> a + list_sum(range(1000)))',
    ]) {
      expect({ sql, refused: await refused(sql) }).toEqual({ sql, refused: expect.stringMatching(/would build a list/) });
    }
    // Inside a lambda over constants, a list whose length depends on the lambda's parameter cannot be counted.
    for (const sql of [
      'SELECT list_transform(range(1100), lambda x: list_sum(range(x, x + 1000)))',
      'SELECT list_transform(range(10), x -> len(repeat([1], x)))',
    ]) {
      expect({ sql, refused: await refused(sql) }).toEqual({ sql, refused: expect.stringMatching(/cannot count them/) });
    }
  });

  it('counts the steps of edit distances between texts built from constants', async () => {
    for (const sql of [
      "SELECT levenshtein(repeat('a', 70000), repeat('b', 70000)) AS d",
      "SELECT jaro_winkler_similarity(lpad('a', 20000, 'x'), repeat('b', 20000)) AS d",
      "SELECT list_transform(range(100), x -> damerau_levenshtein(repeat('a', 2000), repeat('b', 2000))) AS d",
    ]) {
      expect({ sql, refused: await refused(sql) }).toEqual({
        sql,
        refused: expect.stringMatching(/steps building or comparing texts/),
      });
    }
    for (const sql of [
      "SELECT levenshtein(repeat('a', 5000), repeat('b', 5000)) AS d",
      "SELECT levenshtein(name, 'ada') FROM sales.orders",
    ]) {
      expect({ sql, refused: await refused(sql) }).toEqual({ sql, refused: undefined });
    }
  });

  it('counts a step a character of texts built from constants, over the whole query', async () => {
    for (const sql of [
      // Eight of these folded for 14 s with timeout_seconds 1: nothing reaches a fold.
      `SELECT concat(${Array.from({ length: 8 }, (_, i) => `md5(repeat('a${i}', 500000000))`).join(', ')}) AS x`,
      // Each item under the limit, the query over it.
      "SELECT md5(repeat('a', 60000000)) AS a, md5(repeat('b', 60000000)) AS b",
      "SELECT 1 AS a WHERE md5(lpad('a', 60000000, 'x')) <> md5(rpad('b', 60000000, 'y'))",
      // Once a value of the list its lambda runs over.
      "SELECT list_transform(range(1000), x -> md5(repeat('a', 1000000))) AS d",
    ]) {
      expect({ sql: sql.slice(0, 60), refused: await refused(sql) }).toEqual({
        sql: sql.slice(0, 60),
        refused: expect.stringMatching(/would take the query to [\d,.]+ steps building or comparing texts from constants/),
      });
    }
    expect(await refused("SELECT md5(repeat('a', 40000000)) AS a, md5(repeat('b', 40000000)) AS b")).toBeUndefined();
  });

  it('lets short constant lists and lists from columns through (the memory budget bounds those)', async () => {
    for (const sql of [
      'SELECT range(1000000)',
      'SELECT generate_series(1, 999999)',
      'SELECT range(1000000, 0)',
      "SELECT range(DATE '2020-01-01', DATE '2021-01-01', INTERVAL 1 DAY)",
      'SELECT repeat(range(100), 100)',
      "SELECT repeat('x', 100000000)",
      'SELECT range(x) FROM (VALUES (100000000)) t(x)',
      'SELECT range(n) FROM sales.orders',
      'SELECT unnest(range(4000)) * 2 AS a',
      'SELECT list_transform(range(1000), x -> x * 2)',
      'SELECT list_transform(range(900), x -> range(1000))',
      "SELECT list_transform(tags, x -> upper(x)) FROM (VALUES (['a', 'b'])) t(tags)",
      'SELECT list_transform(range(1000), x -> x + n) FROM sales.orders',
      // Table functions yield their rows as the query runs (the timeout stops them): only their arguments are folded.
      'SELECT count(*) FROM range(400000000)',
      'SELECT sum(i) FROM range(2000000) t(i), generate_series(1, 1000000) g(j)',
      "SELECT count(*) FROM range(TIMESTAMP '2000-01-01', TIMESTAMP '2200-01-01', INTERVAL 1 SECOND)",
    ]) {
      expect({ sql, refused: await refused(sql) }).toEqual({ sql, refused: undefined });
    }
  });

  it('walks the widest and deepest trees a query text makes, once each node', async () => {
    // 100,000 characters of list (the most a query text holds), and expressions nested as deep as DuckDB parses.
    const wide = await tree(`SELECT [${'1,'.repeat(49_999)}1]`);
    expect(oversizedConstantList(wide, { maxListElements: 49_999 })).toMatch(
      /list_value\(\.\.\.\) would build a list of 50,000 values/,
    );
    const deep = await tree(`SELECT ${'abs('.repeat(900)}range(2000000)${')'.repeat(900)}`);
    expect(oversizedConstantList(deep, limits)).toMatch(/^range\(\.\.\.\) would build a list of 2,000,000 values/);
  });

  it('takes a tenth of the memory budget for the limit, at some 100 bytes a value', () => {
    expect(maxConstantListElements(1024)).toBe(1_048_576);
    expect(maxConstantListElements(256)).toBe(262_144);
  });
});

describe('bytes billed', () => {
  const mb = 2 ** 20;

  it('bills each referenced table at least 10 MB, and a query with none 10 MB, rounded up to the MB', () => {
    expect(MIN_BILLED_BYTES).toBe(10 * mb);
    expect(billedBytes([])).toBe(10 * mb);
    expect(billedBytes([0])).toBe(10 * mb);
    expect(billedBytes([80])).toBe(10 * mb);
    expect(billedBytes([80, 0, 5])).toBe(30 * mb);
    expect(billedBytes([10 * mb + 1])).toBe(11 * mb);
    expect(billedBytes([3 * 2 ** 30, 1])).toBe(3 * 2 ** 30 + 10 * mb);
  });
});

describe('rounds between tenants', () => {
  it('takes lower rounds first', () => {
    expect(queuePriority(0)).toBeGreaterThan(queuePriority(1));
    expect(Number.isInteger(queuePriority(12))).toBe(true);
  });
});

describe('cancelling', () => {
  it('cancels a PENDING job at once, asks the worker of a RUNNING one, answers a CANCELLED one again, refuses an ended one', () => {
    expect(cancelEffect('PENDING')).toBe('cancel');
    expect(cancelEffect('RUNNING')).toBe('ask-worker');
    expect(cancelEffect('CANCELLED')).toBe('already-cancelled');
    expect(cancelEffect('DONE')).toEqual({ conflict: 'The job has already ended: it is DONE' });
    expect(cancelEffect('FAILED')).toEqual({ conflict: 'The job has already ended: it is FAILED' });
  });
});

describe("DuckDB's sizes", () => {
  it('reads decimal and binary units', () => {
    expect(duckDbSizeBytes('256MB')).toBe(256_000_000);
    expect(duckDbSizeBytes('1GiB')).toBe(2 ** 30);
    expect(duckDbSizeBytes('1.5 gb')).toBe(1_500_000_000);
    expect(duckDbSizeBytes('512B')).toBe(512);
  });
});
