import { physicalNames } from '../../src/adapters/warehouse/index.js';
import {
  catalogKey,
  MAX_SCANNED_COLUMNS,
  QueryRefused,
  type ReadableCatalog,
} from '../../src/adapters/warehouse/query/analyze.js';
import {
  callerLocation,
  errorClass,
  locations,
  pointedOffset,
  positionAt,
  withheldMessage,
} from '../../src/adapters/warehouse/query/failures.js';
import { LineageUnknown, planLineage } from '../../src/adapters/warehouse/query/lineage.js';
import { QuerySandbox, resultPrivacy } from '../../src/adapters/warehouse/query/sandbox.js';
import { openSandboxThread } from '../../src/adapters/warehouse/query/sandbox-thread.js';

// Another tenant's `hr.people` (salary and ssn private, so masked here) and the caller's own `sales.orders`.
const people = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290a', tableId: '01a209a3-8879-7269-8cc5-65c132e568d9' };
const orders = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290b', tableId: '01a209a3-8879-7269-8cc5-65c132e568da' };
const catalog: ReadableCatalog = new Map([
  [
    catalogKey('HR', 'People'),
    {
      ref: people,
      columns: [
        { name: 'name', type: 'STRING', repeated: false, masked: false },
        { name: 'team', type: 'STRING', repeated: false, masked: false },
        { name: 'salary', type: 'INT64', repeated: false, masked: true },
        { name: 'ssn', type: 'STRING', repeated: false, masked: true },
        { name: 'tags', type: 'STRING', repeated: true, masked: false },
        { name: 'codes', type: 'STRING', repeated: true, masked: true },
      ],
    },
  ],
  [
    catalogKey('sales', 'orders'),
    {
      ref: orders,
      columns: [
        { name: 'person', type: 'STRING', repeated: false, masked: false },
        { name: 'amount', type: 'FLOAT64', repeated: false, masked: false },
      ],
    },
  ],
  [catalogKey('dup', 'x'), null],
]);

let sandbox: QuerySandbox;

beforeAll(async () => {
  sandbox = await QuerySandbox.open();
});
afterAll(() => sandbox.close());

/** Each result column's privacy, by DuckDB's name for it. */
async function privacy(sql: string): Promise<Record<string, 'private' | 'public'>> {
  const checked = await sandbox.check(sql, catalog, { names: true }).catch((error: Error) => {
    throw new Error(`${sql}: ${error.message}`);
  });
  const names = checked.names!;
  const masked = resultPrivacy(checked, names.length);
  expect({ sql, followed: checked.lineage !== undefined }).toEqual({ sql, followed: true });
  return Object.fromEntries(names.map((name, i) => [name, masked[i] ? 'private' : 'public']));
}

describe('the SQL guard', () => {
  it('rewrites readable tables to their physical names, and accepts ordinary SQL', async () => {
    const checked = await sandbox.check('SELECT name FROM hr.people', catalog);
    expect(checked.sql).toContain(physicalNames(people).table);
    expect(checked.sql).not.toMatch(/\bhr\b/);
    for (const sql of [
      "SELECT [1, 2, 3] AS l, {'a': 1} AS s, MAP {'k': 1} AS m, ROW(1, 2) AS r",
      'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r',
      'SELECT * FROM range(3) r, generate_series(1, 2) g, unnest([1, 2]) u',
      "SELECT EXTRACT(year FROM DATE '2026-01-02') AS y, INTERVAL 1 DAY AS d, 'a' LIKE 'b' ESCAPE 'c' AS l, x[1] AS first FROM (SELECT [1] AS x)",
      "SELECT list_transform([1, 2], x -> x + 1) AS l, [x * 2 FOR x IN [1, 2]] AS c, list_aggregate([1], 'sum') AS a",
      'SELECT name, row_number() OVER (PARTITION BY team ORDER BY name) AS n FROM hr.people QUALIFY n = 1',
    ]) {
      await expect(sandbox.check(sql, catalog)).resolves.toMatchObject({ sql: expect.any(String) });
    }
  });

  it('prints every number as the caller wrote it: doubles, integers past 2^53, the ends of their types', async () => {
    // DuckDB writes a DOUBLE constant as `1000.0`, which JSON.parse reads as 1000 and JSON.stringify writes as an integer.
    const cases: [string, string][] = [
      ['SELECT 1e3 AS x', '1000.0'],
      ['SELECT 1.0e0 AS x', '1.0'],
      ['SELECT count(*) AS n FROM sales.orders WHERE amount > 1e1', '10.0'],
      ['SELECT 9223372036854775807 - 1 AS x', '9223372036854775807'],
      ['SELECT 9007199254740993 + 0 AS x', '9007199254740993'],
      ["SELECT repeat('a', 9223372036854775807) AS x", '9223372036854775807'],
      ['SELECT -0.0 AS x, 1.5 AS y, 1e-7 AS z', '1e-07'],
      [
        'SELECT 18446744073709551615 AS x, 170141183460469231731687303715884105727 AS y',
        '170141183460469231731687303715884105727',
      ],
    ];
    for (const [sql, printed] of cases) {
      const checked = await sandbox.check(sql, catalog).catch((error: Error) => error.message);
      expect({ sql, printed: typeof checked === 'string' ? checked : checked.sql.includes(printed) }).toEqual({
        sql,
        printed: true,
      });
    }
    // Past DOUBLE's range DuckDB writes Infinity, which is no JSON: the query's fault, saying why.
    for (const sql of ['SELECT 1e400 AS x', 'SELECT -1e400 AS x', 'SELECT 1 AS x LIMIT 1e400']) {
      await expect(sandbox.check(sql, catalog)).rejects.toMatchObject({ reason: 'invalidQuery' });
      await expect(sandbox.check(sql, catalog)).rejects.toThrow(/beyond DOUBLE's range/);
    }
  });

  it('refuses what is not a readable table or an allowed function, with a reason', async () => {
    const refused = async (sql: string, reason: RegExp) => {
      await expect(sandbox.check(sql, catalog)).rejects.toThrow(QueryRefused);
      await expect(sandbox.check(sql, catalog)).rejects.toThrow(reason);
    };
    await refused('SELECT * FROM dup.x', /ambiguous/);
    await refused('SELECT * FROM hr.other', /not one this query's project may read/);
    await refused("SELECT * FROM read_parquet('x')", /Table functions other than range, generate_series, unnest/);
    await refused('SELECT * FROM duckdb_tables()', /Table functions/);
    await refused('WITH x AS (SELECT * FROM duckdb_tables) SELECT * FROM x', /Unknown table "duckdb_tables"/);
    await refused('WITH orders AS (SELECT * FROM orders) SELECT * FROM orders', /Unknown table "orders"/);
    await refused("SELECT nextval('s')", /nextval is not allowed/);
    await refused('SELECT main.version() AS v', /version is not allowed/);
    await refused('SELECT pg_catalog.upper(name) FROM hr.people', /by their names alone/);
    await refused("SELECT current_setting('threads') AS t", /current_setting is not allowed/);
    await refused('SELECT sleep_ms(1000) AS s', /sleep_ms is not allowed/);
    await refused("SELECT json_serialize_plan('SELECT 1') AS p", /json_serialize_plan is not allowed/);
    await refused('SELECT stats(salary) FROM hr.people', /stats is not allowed/);
    await refused("SELECT sum(salary) OVER () FROM hr.people p, (SELECT getvariable('x')) v", /getvariable is not allowed/);
    await refused("PIVOT hr.people ON team IN ('x') USING max(current_setting('x'))", /current_setting is not allowed/);
    // Each of these took the process down (SIGSEGV) on JSON nested this deep.
    const deep = "repeat('[', 100000) || repeat(']', 100000)";
    for (const call of [
      `json_structure(${deep})`,
      `json_contains(${deep}, ${deep})`,
      `json_merge_patch(${deep}, '{}')`,
      `from_json('[]', repeat('[', 100000) || '"JSON"' || repeat(']', 100000))`,
      `json_transform_strict('[]', repeat('[', 100000) || '"JSON"' || repeat(']', 100000))`,
    ]) {
      await refused(`SELECT ${call} AS v`, new RegExp(`${call.slice(0, call.indexOf('('))} is not allowed`));
    }
    await refused(`SELECT json_group_structure(json(${deep})) AS v FROM hr.people`, /json_group_structure is not allowed/);
    await refused('SELECT 1; SELECT 2', /exactly one SELECT/);
    // A text that does not parse is the query's fault (invalidQuery), not a refusal.
    await expect(sandbox.check('SELECT FROM WHERE', catalog)).rejects.toMatchObject({ reason: 'invalidQuery' });
    await expect(sandbox.check('SELECT FROM WHERE', catalog)).rejects.toThrow(
      /^The query could not be parsed: syntax error at or near "WHERE"/,
    );
    await refused('VACUUM', /Only a SELECT/);
  });

  it('refuses a statement whose plan would scan too many table columns, CTE expansions counted', async () => {
    const columns = Array.from({ length: 10_000 }, (_, i) => ({
      name: `c${i}`,
      type: 'STRING' as const,
      repeated: false,
      masked: false,
    }));
    const wideCatalog: ReadableCatalog = new Map([...catalog, [catalogKey('wide', 't'), { ref: orders, columns }]]);
    const copies = Math.floor(MAX_SCANNED_COLUMNS / columns.length) + 1;
    const wide = `SELECT count(*) AS n FROM ${Array.from({ length: copies }, (_, i) => `wide.t t${i}`).join(', ')}`;
    await expect(sandbox.check(wide, wideCatalog)).rejects.toThrow(
      `The query is too large to check: it scans ${copies * columns.length} table columns`,
    );
    const doubling = Array.from({ length: 16 }, (_, i) => `c${i + 1} AS (SELECT * FROM c${i} x, c${i} y)`).join(', ');
    const nested = `WITH c0 AS (SELECT * FROM hr.people), ${doubling} SELECT count(*) AS n FROM c16`;
    expect(nested.length).toBeLessThan(1000);
    await expect(sandbox.check(nested, catalog)).rejects.toThrow(/too large to check/);
    await expect(
      sandbox.check('WITH c0 AS (SELECT * FROM hr.people) SELECT count(*) AS n FROM c0 x, c0 y', catalog),
    ).resolves.toBeDefined();
  });

  it('runs in a thread of its own for the engines, with the same answers and refusals', async () => {
    const thread = await openSandboxThread();
    try {
      const sql = 'SELECT #3, name FROM hr.people';
      const [there, here] = await Promise.all([
        thread.check(sql, catalog, { names: true }),
        sandbox.check(sql, catalog, { names: true }),
      ]);
      expect(there).toEqual(here);
      await expect(thread.check('SELECT * FROM hr.other', catalog)).rejects.toThrow(QueryRefused);
      await expect(thread.check('SELECT nope FROM hr.people', catalog)).rejects.toThrow(/Binder Error/);
    } finally {
      await thread.close();
    }
    await expect(thread.check('SELECT 1', catalog)).rejects.toThrow(/closed/);
  });

  it('fails a statement DuckDB cannot bind with its own message', async () => {
    await expect(sandbox.check('SELECT nope FROM hr.people', catalog)).rejects.toThrow(/Binder Error.*nope/);
  });
});

describe('column lineage, from the plan DuckDB binds', () => {
  it('resolves every way a query names a column before deciding what is private', async () => {
    const cases: [string, Record<string, 'private' | 'public'>][] = [
      // Positional references.
      ['SELECT #3 FROM hr.people', { salary: 'private' }],
      ['SELECT #1, #2 FROM (SELECT ssn, team FROM hr.people)', { ssn: 'private', team: 'public' }],
      // Star expansions.
      [
        'SELECT * FROM hr.people',
        { name: 'public', team: 'public', salary: 'private', ssn: 'private', tags: 'public', codes: 'private' },
      ],
      ["SELECT COLUMNS('^s') FROM hr.people", { salary: 'private', ssn: 'private' }],
      ["SELECT COLUMNS(c -> c LIKE '%a%') FROM hr.people", { name: 'public', team: 'public', salary: 'private', tags: 'public' }],
      ['SELECT * EXCLUDE (salary, ssn, codes) FROM hr.people', { name: 'public', team: 'public', tags: 'public' }],
      [
        'SELECT * EXCLUDE (ssn, codes, tags) REPLACE (0 AS salary) FROM hr.people',
        { name: 'public', team: 'public', salary: 'public' },
      ],
      [
        'SELECT max(COLUMNS(* EXCLUDE (tags, codes))) FROM hr.people',
        { name: 'public', team: 'public', salary: 'private', ssn: 'private' },
      ],
      // USING and NATURAL joins merge a column from both sides.
      ['SELECT name, salary FROM hr.people a JOIN hr.people b USING (name, salary)', { name: 'public', salary: 'private' }],
      [
        'SELECT * FROM (SELECT name, ssn FROM hr.people) NATURAL JOIN (SELECT name, ssn FROM hr.people)',
        { name: 'public', ssn: 'private' },
      ],
      // A struct's fields derive from the whole struct.
      ["SELECT s.* FROM (SELECT {'a': name, 'b': team} AS s FROM hr.people)", { a: 'public', b: 'public' }],
      ["SELECT s.* FROM (SELECT {'a': name, 'b': ssn} AS s FROM hr.people)", { a: 'private', b: 'private' }],
      // Aliases through CTEs and subqueries.
      ['WITH x(n, s) AS (SELECT name, salary FROM hr.people) SELECT s, n FROM x', { s: 'private', n: 'public' }],
      ['SELECT q.a FROM (SELECT ssn AS a FROM hr.people) q', { a: 'private' }],
      ['SELECT salary AS s, s + 1 AS t, name AS n FROM hr.people', { s: 'private', t: 'private', n: 'public' }],
      // GROUP BY ALL, ORDER BY ALL, UNION BY NAME.
      [
        'SELECT team, max(salary) AS top, count(*) AS n FROM hr.people GROUP BY ALL ORDER BY ALL',
        { team: 'public', top: 'private', n: 'public' },
      ],
      [
        "SELECT name, salary FROM hr.people UNION ALL BY NAME SELECT 1 AS salary, 'x' AS name",
        { name: 'public', salary: 'private' },
      ],
      // PIVOT and UNPIVOT.
      ["PIVOT hr.people ON team IN ('x', 'y') USING sum(salary) GROUP BY name", { name: 'public', x: 'private', y: 'private' }],
      ["PIVOT hr.people ON team IN ('x', 'y') USING count(*) GROUP BY name", { name: 'public', x: 'public', y: 'public' }],
      [
        'UNPIVOT (SELECT name, ssn, team FROM hr.people) ON ssn, team INTO NAME k VALUE v',
        { name: 'public', k: 'public', v: 'private' },
      ],
      // Lambdas see their captures.
      ['SELECT list_transform(tags, x -> x || salary) AS l FROM hr.people', { l: 'private' }],
      ['SELECT list_transform(tags, x -> upper(x)) AS l FROM hr.people', { l: 'public' }],
      ['SELECT list_filter(tags, x -> x = ssn) AS l FROM hr.people', { l: 'private' }],
      // Whole rows.
      ['SELECT to_json(people) AS j FROM hr.people', { j: 'private' }],
      ['SELECT row_to_json(p) AS j FROM hr.people p', { j: 'private' }],
      ['SELECT struct_pack(COLUMNS(*)) FROM (SELECT name, ssn FROM hr.people)', { name: 'public', ssn: 'private' }],
      ['SELECT p AS whole FROM hr.people p', { whole: 'private' }],
      // Anything computed from a private value.
      [
        "SELECT list(salary) AS a, string_agg(ssn, ',') AS b, first(ssn) AS c, max(salary) AS d FROM hr.people",
        { a: 'private', b: 'private', c: 'private', d: 'private' },
      ],
      [
        "SELECT concat(ssn, '') AS e, ssn || '' AS f, hash(salary) AS g, upper(name) AS h FROM hr.people",
        { e: 'private', f: 'private', g: 'private', h: 'public' },
      ],
      ["SELECT CASE WHEN salary > 100 THEN 'high' ELSE 'low' END AS band FROM hr.people", { band: 'private' }],
      [
        'SELECT count(DISTINCT ssn) AS n, count(*) FILTER (WHERE salary > 1) AS f, count(*) AS c FROM hr.people',
        { n: 'private', f: 'private', c: 'public' },
      ],
      [
        'SELECT row_number() OVER (ORDER BY salary) AS r, row_number() OVER (ORDER BY name) AS q FROM hr.people',
        { r: 'private', q: 'public' },
      ],
      ['SELECT string_agg(name ORDER BY salary) AS names FROM hr.people', { names: 'private' }],
      ['SELECT unnest(codes) AS c, unnest(tags) AS t FROM hr.people', { c: 'private', t: 'public' }],
      ['SELECT u.x FROM hr.people, unnest(codes) u(x)', { x: 'private' }],
      // Subqueries: correlated, scalar, IN (a mark join), EXISTS.
      [
        'SELECT name, (SELECT max(p2.salary) FROM hr.people p2 WHERE p2.team = p.team) AS top FROM hr.people p',
        { name: 'public', top: 'private' },
      ],
      ['SELECT name IN (SELECT ssn FROM hr.people) AS hit, name FROM hr.people', { hit: 'private', name: 'public' }],
      ['SELECT (SELECT min(ssn) FROM hr.people) AS m', { m: 'private' }],
      // Rows selected by a private column carry public values (where a private column is used is recorded apart).
      ['SELECT EXISTS (SELECT ssn FROM hr.people WHERE salary > 5) AS e', { e: 'public' }],
      ['SELECT count(*) AS n FROM hr.people WHERE salary > 5', { n: 'public' }],
      ['SELECT name FROM hr.people WHERE salary > 100 ORDER BY ssn', { name: 'public' }],
      ['SELECT DISTINCT ON (team) name FROM hr.people ORDER BY salary', { name: 'public' }],
      ['SELECT p.name, o.amount FROM hr.people p JOIN sales.orders o ON o.person = p.ssn', { name: 'public', amount: 'public' }],
      // Set operations take every side's values.
      ['SELECT name FROM hr.people INTERSECT SELECT ssn FROM hr.people', { name: 'private' }],
      ['SELECT name FROM hr.people EXCEPT SELECT ssn FROM hr.people', { name: 'private' }],
      ['SELECT person FROM sales.orders UNION SELECT name FROM hr.people', { person: 'public' }],
      // Recursive CTEs: the lineage grows until it stays the same.
      ['WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r', { n: 'public' }],
      [
        'WITH RECURSIVE r(n, s) AS (SELECT 1, 0 UNION ALL SELECT n + 1, s + (SELECT max(salary) FROM hr.people) FROM r WHERE n < 3) SELECT n, s FROM r',
        { n: 'public', s: 'private' },
      ],
      // Joins of other kinds, VALUES and table functions.
      [
        'SELECT a.name, b.salary FROM hr.people a ASOF JOIN hr.people b ON a.team = b.team AND a.name >= b.name',
        { name: 'public', salary: 'private' },
      ],
      ['SELECT a.ssn AS x, b.name AS y FROM hr.people a POSITIONAL JOIN hr.people b', { x: 'private', y: 'public' }],
      ["SELECT v.a, v.b FROM (VALUES (1, 'x')) v(a, b)", { a: 'public', b: 'public' }],
      ['SELECT r.range + p.salary AS s, r.range AS n FROM range(3) r, hr.people p', { s: 'private', n: 'public' }],
      ['SELECT rowid AS id FROM hr.people', { id: 'public' }],
      ['SELECT count(*) AS n FROM hr.people', { n: 'public' }],
      ['SELECT person, amount FROM sales.orders', { person: 'public', amount: 'public' }],
    ];
    for (const [sql, expected] of cases) expect({ sql, privacy: await privacy(sql) }).toEqual({ sql, privacy: expected });
  });

  it('records where each source column is used, clause by clause, and what the scans read', async () => {
    const checked = await sandbox.check(
      'SELECT p.team, sum(o.amount) AS total FROM hr.people p JOIN sales.orders o ON o.person = p.ssn WHERE p.salary > 10 GROUP BY p.team',
      catalog,
    );
    const uses = checked.lineage!.uses;
    const ssn = { table: 'hr.people', column: 'ssn', masked: true };
    const person = { table: 'sales.orders', column: 'person', masked: false };
    expect(uses).toContainEqual({
      clause: 'join',
      comparison: 'COMPARE_EQUAL',
      left: { sources: [ssn], opaque: false, made: false },
      right: { sources: [person], opaque: false, made: false },
      computed: false,
    });
    expect(uses).toContainEqual({
      clause: 'where',
      columns: { sources: [{ table: 'hr.people', column: 'salary', masked: true }], opaque: false, made: false },
    });
    expect(uses).toContainEqual({
      clause: 'group',
      columns: { sources: [{ table: 'hr.people', column: 'team', masked: false }], opaque: false, made: false },
    });
    expect(uses).toContainEqual({
      clause: 'aggregate',
      columns: { sources: [{ table: 'sales.orders', column: 'amount', masked: false }], opaque: false, made: false },
    });
    expect(checked.read).toEqual(
      new Map([
        ['hr.people', new Set(['ssn', 'salary', 'team'])],
        ['sales.orders', new Set(['person', 'amount'])],
      ]),
    );
    expect(checked.readsMaskedTable).toBe(true);
    // A bare reference passes a column on; an expression computes on it; set operations and correlations are uses too.
    const usesOf = async (sql: string) => (await sandbox.check(sql, catalog)).lineage!.uses;
    const salary = { sources: [{ table: 'hr.people', column: 'salary', masked: true }], opaque: false, made: false };
    expect(await usesOf('SELECT s FROM (SELECT salary AS s FROM hr.people)')).toEqual([]);
    expect(await usesOf('SELECT salary + 1 AS s FROM hr.people')).toEqual([{ clause: 'select', columns: salary }]);
    expect(await usesOf('SELECT salary FROM hr.people UNION ALL SELECT 1')).toContainEqual({
      clause: 'set',
      columns: { ...salary, made: true },
    });
    expect(
      await usesOf('SELECT name FROM hr.people p WHERE EXISTS (SELECT 1 FROM sales.orders WHERE amount = p.salary)'),
    ).toContainEqual({
      clause: 'correlate',
      columns: salary,
    });
    expect(await usesOf('SELECT p.name FROM hr.people p JOIN sales.orders o ON lower(p.ssn) = o.person')).toContainEqual(
      expect.objectContaining({ clause: 'join', comparison: 'COMPARE_EQUAL', computed: true }),
    );
    expect((await sandbox.check('SELECT count(*) AS n FROM hr.people', catalog)).read.size).toBe(0);
    // Whether the query makes a column's values, or passes on values a table stores (what a join-only key may meet).
    const made = async (sql: string) => (await sandbox.check(sql, catalog)).lineage!.columns.map((column) => column.made);
    expect(
      await made(
        "SELECT name, t, name || 'x' AS y, r.range, n FROM (SELECT name, team AS t FROM hr.people GROUP BY name, team), range(2) r, (SELECT count(*) AS n FROM sales.orders)",
      ),
    ).toEqual([false, false, true, true, true]);
    expect(await made('SELECT person FROM sales.orders UNION SELECT name FROM hr.people')).toEqual([false]);
    expect(await made("SELECT person FROM sales.orders UNION SELECT 'x'")).toEqual([true]);
    expect(await made('SELECT unnest([person]) AS u, row_number() OVER () AS w FROM sales.orders')).toEqual([true, true]);
    expect((await sandbox.check('SELECT person FROM sales.orders', catalog)).readsMaskedTable).toBe(false);
  });

  it('fails closed: an operator it does not know stops the lineage, and a scan of anything but a stand-in is refused', () => {
    const scan = {
      type: 'LOGICAL_GET',
      children: [],
      table_index: 0,
      name: 'seq_scan',
      names: ['a'],
      column_indexes: [{ index: 0 }],
    };
    const standIn = () => ({ key: 'hr.people', columns: [{ name: 'a', masked: true }] });
    const options = { catalog: 'c', standIn };
    expect(() => planLineage({ type: 'LOGICAL_SOMETHING_NEW', children: [] }, options)).toThrow(LineageUnknown);
    expect(() => planLineage({ ...scan, function_data: { catalog: 'system', schema: 'main', table: 'x' } }, options)).toThrow(
      QueryRefused,
    );
    expect(() => planLineage({ ...scan, name: 'duckdb_settings' }, options)).toThrow(/duckdb_settings/);
    const lineage = planLineage(
      {
        type: 'LOGICAL_PROJECTION',
        table_index: 1,
        expressions: [
          { expression_class: 'BOUND_REF', index: 0 },
          { expression_class: 'BOUND_REF', index: 7 },
          { expression_class: 'BOUND_COLUMN_REF', binding: { table_index: 99, column_index: 0 } },
          { expression_class: 'BOUND_SUBQUERY' },
        ],
        children: [{ ...scan, function_data: { catalog: 'c', schema: 's', table: 't' } }],
      },
      options,
    );
    expect(lineage.columns.map((column) => column.opaque)).toEqual([false, true, true, true]);
    // An opaque column is private once a masked table is read, public when none is.
    expect(resultPrivacy({ lineage: { ...lineage, columns: [lineage.columns[1]!] }, readsMaskedTable: true }, 1)).toEqual([true]);
    expect(resultPrivacy({ lineage: { ...lineage, columns: [lineage.columns[1]!] }, readsMaskedTable: false }, 1)).toEqual([
      false,
    ]);
    expect(resultPrivacy({ lineage: undefined, readsMaskedTable: true }, 2)).toEqual([true, true]);
    expect(resultPrivacy({ lineage, readsMaskedTable: true }, 3)).toEqual([true, true, true]);
  });
});

describe('failure messages that withhold values', () => {
  it('keeps the error class only from the list DuckDB has', () => {
    expect(errorClass("Conversion Error: Could not convert string 'alice-ssn-111' to INT32")).toBe('Conversion Error');
    expect(errorClass('Invalid Input Error: alice-ssn-111')).toBe('Invalid Input Error');
    expect(errorClass('Out of Range Error: Overflow')).toBe('Out of Range Error');
    expect(errorClass('alice Error: x')).toBe('Error');
    expect(errorClass('Invalid Input Error Error: x')).toBe('Error');
    expect(withheldMessage('Conversion Error', { line: 1, column: 8 })).toBe(
      'Conversion Error at line 1, column 8. The details are withheld: this query reads a table of another tenant that has private columns or an aggregation rule',
    );
  });

  it("finds where DuckDB's caret points, and maps a printed statement's location onto the caller's text", () => {
    const sql = 'SELECT x FROM (SELECT CAST(secret AS INTEGER) FROM t) AS q(x)';
    const message = `Conversion Error: Could not convert string 'v' to INT32\n\nLINE 1: ${sql}\n${' '.repeat(8 + sql.indexOf('CAST'))}^`;
    expect(pointedOffset(message, sql)).toBe(sql.indexOf('CAST'));
    const long = `SELECT ${'a, '.repeat(40)}CAST(secret AS INTEGER), ${'b, '.repeat(40)}c FROM t`;
    const cut = `...${long.slice(long.indexOf('CAST') - 37, long.indexOf('CAST') + 40)}...`;
    expect(pointedOffset(`Conversion Error: x\n\nLINE 1: ${cut}\n${' '.repeat(8 + 40)}^`, long)).toBe(long.indexOf('CAST'));
    expect(pointedOffset('Invalid Input Error: alice-ssn-111', sql)).toBeUndefined();
    expect(pointedOffset(`Conversion Error: x\n\nLINE 1: CAST\n        ^`, 'CAST(a) + CAST(b)')).toBeUndefined();

    const caller = [
      { kind: 'COLUMN_REF', at: 7 },
      { kind: 'CAST', at: 20 },
    ];
    expect(
      callerLocation(
        caller,
        [
          { kind: 'COLUMN_REF', at: 7 },
          { kind: 'CAST', at: 31 },
        ],
        31,
      ),
    ).toBe(20);
    expect(callerLocation(caller, [{ kind: 'CAST', at: 31 }], 31)).toBeUndefined();
    expect(positionAt('SELECT 1,\n  é, CAST(x AS INT)', Buffer.byteLength('SELECT 1,\n  é, '))).toEqual({ line: 2, column: 6 });
    expect(
      locations({
        a: [
          { class: 'X', query_location: 3 },
          { type: 'Y', query_location: 2 ** 64 },
        ],
      }),
    ).toEqual([{ kind: 'X', at: 3 }]);
  });
});
