/**
 * The analysis rules of other tenants' tables (src/adapters/warehouse/query/rules.ts), checked on
 * the sandbox's own parse and plan of each query, without HTTP: join-only private columns, the
 * aggregation threshold and the shapes it holds for, and the GoogleSQL text BigQuery runs them on.
 */
import { catalogKey, type ReadableCatalog, type ReadableTable } from '../../src/adapters/warehouse/query/analyze.js';
import { commonText, withThreshold } from '../../src/adapters/warehouse/query/googlesql.js';
import { QueryFailure } from '../../src/adapters/warehouse/query/interface.js';
import type { Lineage } from '../../src/adapters/warehouse/query/lineage.js';
import { aggregationRefusal, joinOnlyRefusal, strictest } from '../../src/adapters/warehouse/query/rules.js';
import { QuerySandbox } from '../../src/adapters/warehouse/query/sandbox.js';

const ref = (n: number) => ({
  datasetId: `01a209a3-8860-74eb-93e3-3e5b5f3229${String(n).padStart(2, '0')}`,
  tableId: `01a209a3-8879-7269-8cc5-65c132e568${String(n).padStart(2, '0')}`,
});
const column = (name: string, masked = false, type: 'STRING' | 'INT64' = 'STRING') => ({ name, type, repeated: false, masked });
const other = (
  aggregation: ReadableTable['shared'] extends infer S ? (S extends { aggregation: infer A } ? A : never) : never,
) => ({
  tenantId: '01a209a3-0000-7000-8000-000000000001',
  aggregation,
  allowExports: true,
});

// Another tenant's `hr.ids` (secret join-only), `hr.visits` (aggregation rule on customer, 3) and
// `hr.stores` (rule on store, 5); the caller's own `sales.orders` and `sales.guesses`.
const ids: ReadableTable = {
  ref: ref(1),
  columns: [column('name'), column('team'), column('secret', true)],
  shared: other(null),
};
const catalog: ReadableCatalog = new Map([
  [catalogKey('hr', 'ids'), ids],
  [
    catalogKey('hr', 'visits'),
    {
      ref: ref(2),
      columns: [column('customer', false, 'INT64'), column('city'), column('amount', false, 'INT64'), column('email', true)],
      shared: other({ privacyUnit: 'customer', minDistinct: 3 }),
    },
  ],
  [
    catalogKey('hr', 'stores'),
    { ref: ref(3), columns: [column('store'), column('city')], shared: other({ privacyUnit: 'store', minDistinct: 5 }) },
  ],
  [catalogKey('sales', 'orders'), { ref: ref(4), columns: [column('person'), column('amount', false, 'INT64')] }],
  [catalogKey('sales', 'guesses'), { ref: ref(5), columns: [column('guess')] }],
]);
// The same tables as their owner reads them: nothing masked, no rules.
const own: ReadableCatalog = new Map(
  [...catalog].map(([key, table]) => [
    key,
    table && { ...table, shared: undefined, columns: table.columns.map((c) => ({ ...c, masked: false })) },
  ]),
);

let sandbox: QuerySandbox;
beforeAll(async () => {
  sandbox = await QuerySandbox.open();
});
afterAll(() => sandbox.close());

const refusal = async (sql: string, tables = catalog) => (await sandbox.check(sql, tables)).refusal;

describe('join-only private columns', () => {
  it('allows them as equality join keys with a column of a table, and selected as they are', async () => {
    for (const sql of [
      'SELECT name, secret FROM hr.ids',
      'SELECT * FROM hr.ids',
      'SELECT i.name, o.amount FROM hr.ids i JOIN sales.orders o ON o.person = i.secret',
      'SELECT i.name, o.amount FROM hr.ids i JOIN sales.orders o ON i.secret = o.person AND o.amount > 5',
      'SELECT count(*) AS n FROM hr.ids i JOIN sales.guesses g ON g.guess = i.secret',
      'SELECT name FROM hr.ids JOIN (SELECT person AS secret FROM sales.orders) USING (secret)',
      'SELECT s.k FROM (SELECT secret AS k FROM hr.ids) s JOIN sales.orders o ON o.person = s.k',
      'SELECT o.person FROM sales.orders o SEMI JOIN hr.ids i ON o.person = i.secret',
      "SELECT o.person FROM sales.orders o LEFT JOIN hr.ids i ON o.person = i.secret WHERE i.team = 'x'",
      "SELECT name FROM hr.ids WHERE team = 'x' ORDER BY name",
      // Casts of the caller's own columns, and of columns of the other tenant's that are not private.
      'SELECT CAST(o.person AS VARCHAR) AS p, CAST(o.amount AS VARCHAR) AS a FROM hr.ids i JOIN sales.orders o ON o.person = i.secret',
      'SELECT CAST(name AS VARCHAR) AS n, coalesce(team) AS t, name COLLATE nocase AS c FROM hr.ids',
      // The other side passed on as it is stored, through subqueries, CTEs, grouping, DISTINCT and UNION.
      'SELECT i.name FROM hr.ids i JOIN (SELECT DISTINCT g.guess FROM sales.guesses g, range(3) r) c ON c.guess = i.secret',
      'WITH c AS (SELECT person FROM sales.orders GROUP BY person) SELECT i.name FROM hr.ids i JOIN c ON c.person = i.secret',
      'SELECT i.name FROM hr.ids i JOIN (SELECT guess FROM sales.guesses UNION SELECT person FROM sales.orders) u ON u.guess = i.secret',
    ]) {
      expect({ sql, refusal: await refusal(sql) }).toEqual({ sql, refusal: undefined });
    }
  });

  it('refuses every other use before the query runs, naming the column, the rule and the use', async () => {
    const cases: [string, RegExp][] = [
      // The leaking pairs: a binary search with LIKE, and the rest.
      ["SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-1%'", /in a filter/],
      ["SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-9%'", /in a filter/],
      ['SELECT name FROM hr.ids ORDER BY secret DESC LIMIT 1', /in ORDER BY/],
      ['SELECT secret, count(*) AS n FROM hr.ids GROUP BY secret', /in GROUP BY/],
      ["SELECT i.name FROM hr.ids i JOIN (VALUES ('alice-ssn-111')) g(x) ON g.x = i.secret", /joins it to constants/],
      ["SELECT i.name FROM hr.ids i JOIN sales.orders o ON i.secret LIKE o.person || '%'", /not an equality of two columns/],
      ["SELECT name FROM hr.ids WHERE secret IN ('alice-ssn-111', 'bob-ssn-222')", /in a filter/],
      ['SELECT o.person FROM sales.orders o WHERE o.person IN (SELECT secret FROM hr.ids)', /in a filter/],
      ["SELECT secret FROM hr.ids INTERSECT SELECT 'alice-ssn-111'", /in a set operation/],
      ["SELECT secret FROM hr.ids EXCEPT SELECT 'alice-ssn-111'", /in a set operation/],
      ['SELECT secret FROM hr.ids UNION SELECT guess FROM sales.guesses', /in a set operation/],
      ['SELECT name FROM hr.ids QUALIFY row_number() OVER (ORDER BY secret DESC) = 1', /in a window function/],
      ["SELECT count(*) AS n FROM hr.ids WHERE secret = 'alice-ssn-111'", /in a filter/],
      // Everything else the rule names.
      ["SELECT team, count(*) AS n FROM hr.ids GROUP BY team HAVING max(secret) > 'a'", /in an aggregate function/],
      ['SELECT name, rank() OVER (PARTITION BY secret) AS r FROM hr.ids', /in a window function/],
      ['SELECT upper(secret) AS s FROM hr.ids', /in an expression/],
      ['SELECT CAST(secret AS INTEGER) AS s FROM hr.ids', /in an expression/],
      // Casts and functions that change nothing, which DuckDB's binder drops from the plan.
      ['SELECT CAST(secret AS VARCHAR) AS s FROM hr.ids', /in a cast/],
      ['SELECT secret::TEXT AS s FROM hr.ids', /in a cast/],
      ['SELECT TRY_CAST(i.secret AS STRING) AS s FROM hr.ids i', /in a cast/],
      ['SELECT coalesce(secret) AS s FROM hr.ids', /in a function \(coalesce\)/],
      ['SELECT secret COLLATE nocase AS s FROM hr.ids', /in a COLLATE/],
      ['SELECT i.name FROM hr.ids i JOIN sales.orders o ON CAST(i.secret AS VARCHAR) = o.person', /in a cast/],
      ['SELECT i.name FROM hr.ids i JOIN sales.orders o ON coalesce(i.secret) = o.person', /in a function \(coalesce\)/],
      ["SELECT CASE WHEN secret > 'm' THEN 1 END AS s FROM hr.ids", /in an expression/],
      ['SELECT secret, name FROM hr.ids ORDER BY 1', /in ORDER BY/],
      ['SELECT count(DISTINCT secret) AS n FROM hr.ids', /in an aggregate function/],
      ['SELECT min(secret) AS a, max(secret) AS b FROM hr.ids', /in an aggregate function/],
      ['SELECT DISTINCT secret FROM hr.ids', /in DISTINCT/],
      ['SELECT i.name FROM hr.ids i JOIN sales.orders o ON i.secret > o.person', /compares it with >/],
      ['SELECT i.name FROM hr.ids i JOIN sales.orders o ON lower(i.secret) = o.person', /computes on it in a join condition/],
      ["SELECT i.name FROM hr.ids i JOIN sales.orders o ON i.secret = 'x'", /in a filter/],
      ['SELECT a.name FROM hr.ids a JOIN hr.ids b USING (secret)', /joins it with itself/],
      ['SELECT name FROM hr.ids i WHERE EXISTS (SELECT 1 FROM sales.orders o WHERE o.person = i.secret)', /correlated subquery/],
      ["SELECT name FROM hr.ids LIMIT (SELECT count(*) FROM hr.ids WHERE secret > 'm')", /in a filter/],
      ['SELECT unnest([secret]) AS s FROM hr.ids', /in UNNEST/],
      ['SELECT * FROM range((SELECT length(max(secret)) FROM hr.ids))', /in an aggregate function|in an expression/],
      ['WITH RECURSIVE r(s) AS (SELECT secret FROM hr.ids UNION SELECT s FROM r) SELECT s FROM r', /in a set operation/],
      // Guesses made by the query with a table's column mixed in: no longer constants, still made.
      [
        "SELECT i.name FROM hr.ids i JOIN (SELECT i2.name || '-ssn-' || r.range AS g FROM hr.ids i2, range(1000) r) g ON g.g = i.secret",
        /joins it to values the query makes/,
      ],
      [
        "SELECT i.name FROM hr.ids i JOIN (SELECT DISTINCT unnest(['alice-ssn-111', i2.name]) AS x FROM hr.ids i2) u ON u.x = i.secret",
        /joins it to values the query makes/,
      ],
      [
        "SELECT i.name FROM hr.ids i JOIN (SELECT guess FROM sales.guesses UNION SELECT 'alice-ssn-111') u ON u.guess = i.secret",
        /joins it to values the query makes/,
      ],
      [
        'WITH RECURSIVE g(x, n) AS (SELECT name, 0 FROM hr.ids UNION ALL SELECT x || n, n + 1 FROM g WHERE n < 9) SELECT i.name FROM hr.ids i JOIN g ON g.x = i.secret',
        /joins it to values the query makes/,
      ],
      [
        'SELECT i.name FROM hr.ids i JOIN (SELECT max(guess) AS m FROM sales.guesses) g ON g.m = i.secret',
        /joins it to values the query makes/,
      ],
      ['SELECT i.name FROM hr.ids i JOIN sales.guesses g ON g.rowid = i.secret', /joins it to constants|computes on it/],
      [
        'SELECT i.name FROM hr.ids i JOIN (SELECT i2.name || r.range AS x FROM hr.ids i2, range(9) r) g ON i.secret = g.x JOIN hr.ids j ON j.secret = g.x',
        /joins it to values the query makes/,
      ],
    ];
    for (const [sql, use] of cases) {
      const refused = await refusal(sql);
      expect({ sql, refused }).toEqual({
        sql,
        refused: expect.stringMatching(/^Column hr\.ids\.secret is join-only for your tenant/),
      });
      expect({ sql, refused }).toEqual({ sql, refused: expect.stringMatching(use) });
    }
  });

  it('refuses a join of the column with itself made through other columns, and allows one reference joined to many', async () => {
    for (const sql of [
      // Two references of hr.ids, each equal to the same column: a self-join by two steps.
      'SELECT a.name, b.name FROM hr.ids a JOIN sales.orders o ON a.secret = o.person JOIN hr.ids b ON b.secret = o.person',
      'SELECT a.name, b.name FROM hr.ids a JOIN hr.visits v ON a.secret = v.email JOIN hr.ids b ON v.email = b.secret',
      // ...through a filter's equality of two columns of the caller's own.
      'SELECT a.name FROM hr.ids a JOIN sales.orders o ON a.secret = o.person, hr.ids b JOIN sales.guesses g ON b.secret = g.guess WHERE o.person = g.guess',
      // ...through two references of one CTE, materialized or not.
      'WITH p AS MATERIALIZED (SELECT name, secret FROM hr.ids) SELECT p1.name FROM p p1 JOIN sales.orders o ON p1.secret = o.person JOIN p p2 ON p2.secret = o.person',
      'WITH p AS (SELECT name, secret FROM hr.ids) SELECT p1.name FROM p p1 JOIN sales.orders o ON p1.secret = o.person JOIN p p2 ON p2.secret = o.person',
      // ...through a chain of three equalities.
      'SELECT a.name FROM hr.ids a JOIN sales.orders o ON a.secret = o.person JOIN sales.guesses g ON g.guess = o.person JOIN hr.ids b ON b.secret = g.guess',
    ]) {
      expect({ sql, refused: await refusal(sql) }).toEqual({
        sql,
        refused: expect.stringMatching(/^Column hr\.ids\.secret is join-only .*joins two references of it/),
      });
    }
    for (const sql of [
      'SELECT i.name FROM hr.ids i JOIN sales.orders o ON o.person = i.secret JOIN sales.guesses g ON g.guess = i.secret',
      'SELECT a.name FROM sales.orders o JOIN hr.ids a ON a.secret = o.person JOIN hr.ids b ON b.name = o.person',
      'SELECT a.name, b.team FROM hr.ids a JOIN sales.orders o ON a.secret = o.person JOIN hr.ids b ON b.name = a.name',
    ]) {
      expect({ sql, refused: await refusal(sql) }).toEqual({ sql, refused: undefined });
    }
  });

  it("leaves the owner's own queries unrestricted", async () => {
    for (const sql of [
      "SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-1%'",
      'SELECT secret, count(*) AS n FROM hr.ids GROUP BY secret ORDER BY secret DESC',
      'SELECT * FROM hr.visits',
    ]) {
      expect(await refusal(sql, own)).toBeUndefined();
    }
  });

  it('fails closed when the plan or a use cannot be followed, and refuses a join with values the query makes', () => {
    const secret = { table: 'hr.ids', column: 'secret', masked: true };
    expect(joinOnlyRefusal(undefined, true)).toMatch(/cannot follow its plan/);
    expect(joinOnlyRefusal(undefined, false)).toBeUndefined();
    const lineage = (uses: Lineage['uses'], opaque = false): Lineage => ({
      columns: [{ sources: [], opaque, made: opaque }],
      uses,
      equalities: [],
      read: new Map(),
    });
    expect(joinOnlyRefusal(lineage([], true), true)).toMatch(/cannot follow/);
    expect(joinOnlyRefusal(lineage([{ clause: 'order', columns: { sources: [], opaque: true, made: true } }]), true)).toMatch(
      /cannot follow/,
    );
    const join = (right: { sources: (typeof secret)[]; opaque: boolean; made: boolean }) =>
      lineage([
        {
          clause: 'join',
          comparison: 'COMPARE_EQUAL',
          left: { sources: [secret], opaque: false, made: false },
          right,
          computed: false,
        },
      ]);
    expect(joinOnlyRefusal(join({ sources: [], opaque: true, made: true }), true)).toMatch(/cannot follow/);
    const other = { ...secret, column: 'other', masked: false };
    expect(joinOnlyRefusal(join({ sources: [other], opaque: false, made: false }), true)).toBeUndefined();
    expect(joinOnlyRefusal(join({ sources: [other], opaque: false, made: true }), true)).toMatch(
      /values the query makes .* a column of a table as it is stored/,
    );
  });
});

describe('aggregation thresholds', () => {
  it('adds the threshold to HAVING, and counts the groups it drops before the caller’s own HAVING, ORDER BY and LIMIT', async () => {
    const checked = await sandbox.check(
      "SELECT city, count(*) AS n, sum(amount) AS total FROM hr.visits WHERE city <> 'x' GROUP BY city HAVING count(*) > 1 ORDER BY n DESC LIMIT 5",
      catalog,
    );
    expect(checked.refusal).toBeUndefined();
    expect(checked.sql).toMatch(
      /HAVING CASE {2}WHEN \(\(count\(DISTINCT visits\.customer\) >= 3\)\) THEN \(\(count_star\(\) > 1\)\) ELSE CAST\('f' AS BOOLEAN\) END ORDER BY n DESC LIMIT 5$/,
    );
    expect(checked.suppressedSql).toMatch(
      /^SELECT count\(\*\) FROM \(SELECT .* HAVING \(count\(DISTINCT visits\.customer\) < 3\)\) AS dropped$/,
    );
    expect(checked.threshold).toEqual({
      units: [{ alias: 'visits', key: 'hr.visits', unaliased: true, unit: 'customer' }],
      minDistinct: 3,
    });
    // The privacy unit is read (and billed) even when the query names no column of it.
    expect(checked.read.get('hr.visits')).toEqual(new Set(['city', 'amount', 'customer']));
    // Aggregates alone: one group, which the threshold applies to as well.
    expect((await sandbox.check('SELECT count(*) AS n FROM hr.visits', catalog)).sql).toMatch(
      /HAVING \(count\(DISTINCT visits\.customer\) >= 3\)$/,
    );
  });

  it('applies the strictest threshold to every reference of every table with a rule, so that a join cannot split groups', async () => {
    const joined = await sandbox.check(
      'SELECT v.city, count(*) AS n FROM hr.visits v JOIN hr.stores s ON s.city = v.city GROUP BY v.city',
      catalog,
    );
    expect(
      strictest([
        { key: 'a', rule: { privacyUnit: 'x', minDistinct: 3 } },
        { key: 'b', rule: { privacyUnit: 'y', minDistinct: 5 } },
      ]),
    ).toBe(5);
    expect(joined.sql).toContain('HAVING ((count(DISTINCT v.customer) >= 5) AND (count(DISTINCT s.store) >= 5))');
    // A group per customer of another table is a group of one privacy unit: dropped by the same HAVING.
    const split = await sandbox.check(
      'SELECT o.person, sum(v.amount) AS total FROM hr.visits v JOIN sales.orders o ON o.amount = v.amount GROUP BY o.person',
      catalog,
    );
    expect(split.sql).toContain('HAVING (count(DISTINCT v.customer) >= 3)');
  });

  it('allows every aggregate the rule names, by any of its spellings', async () => {
    const sql =
      'SELECT city, count(*) AS n, count(amount) AS c, sum(amount) AS s, avg(amount) AS a, mean(amount) AS m, ' +
      'approx_count_distinct(amount) AS d, stddev(amount) AS sd, stddev_samp(amount) AS ss, stddev_pop(amount) AS sp, ' +
      'variance(amount) AS v, var_samp(amount) AS vs, var_pop(amount) AS vp FROM hr.visits GROUP BY city';
    expect(await refusal(sql)).toBeUndefined();
  });

  it('refuses queries that do not aggregate, and shapes it cannot prove the threshold holds for', async () => {
    const cases: [string, RegExp][] = [
      ['SELECT * FROM hr.visits', /allows only aggregating queries/],
      ['SELECT DISTINCT city FROM hr.visits', /allows only aggregating queries/],
      ['SELECT city FROM hr.visits WHERE customer = 7', /allows only aggregating queries/],
      ['SELECT city, max(amount) AS m FROM hr.visits GROUP BY city', /the aggregate max/],
      ['SELECT city, median(amount) AS m FROM hr.visits GROUP BY city', /the aggregate median/],
      ['SELECT city, list(customer) AS l FROM hr.visits GROUP BY city', /the aggregate list/],
      // Differences of two aggregates, each over a large group, that isolate one unit.
      ['SELECT (SELECT sum(amount) FROM hr.visits) - (SELECT sum(amount) FROM hr.visits WHERE customer <> 7) AS d', /a subquery/],
      ['SELECT sum(amount) - sum(amount) FILTER (WHERE customer <> 7) AS d FROM hr.visits', /FILTER/],
      // A self-join: two references filtered apart differ by one unit.
      [
        'SELECT sum(a.amount) - sum(b.amount) AS d FROM hr.visits a LEFT JOIN hr.visits b ON b.customer = a.customer AND b.customer <> 7',
        /hr\.visits more than once \(a self-join\)/,
      ],
      ['SELECT v.city, count(*) AS n FROM hr.visits v JOIN hr.visits w ON w.city = v.city GROUP BY v.city', /a self-join/],
      ['SELECT sum(CASE WHEN customer = 7 THEN amount END) AS d FROM hr.visits', /sum over an expression/],
      ['SELECT sum(amount * (customer = 7)::INTEGER) AS d FROM hr.visits', /sum over an expression/],
      // TRY_CAST makes null of the values that do not fit: a filter inside the aggregate.
      [
        "SELECT city, count(TRY_CAST(CAST(amount AS VARCHAR) AS ENUM('20'))) AS c FROM hr.visits GROUP BY city",
        /count over an expression/,
      ],
      ['SELECT city, sum(TRY_CAST(amount AS DECIMAL(2, 0))) AS s FROM hr.visits GROUP BY city', /sum over an expression/],
      // A column alias list renames the privacy unit under the threshold's reference.
      [
        'SELECT v.amount AS c, sum(v.customer) AS t FROM hr.visits AS v(amount, city, customer, email) GROUP BY v.amount',
        /column aliases on hr\.visits/,
      ],
      ['SELECT amount, count(*) AS n FROM hr.visits AS visits(amount, city) GROUP BY amount', /column aliases on hr\.visits/],
      // Two levels of grouping sets: a total minus the groups shown is the group the threshold dropped.
      ["SELECT city, sum(amount) AS s FROM hr.visits WHERE city IN ('a', 'b') GROUP BY ROLLUP (city)", /several grouping sets/],
      ['SELECT city, count(*) AS n FROM hr.visits GROUP BY CUBE (city)', /several grouping sets/],
      ['SELECT city, count(*) AS n FROM hr.visits GROUP BY GROUPING SETS ((city), ())', /several grouping sets/],
      // The groups seen through a window, a CTE, a set operation or a second aggregation.
      ['SELECT city, count(*) AS n, sum(count(*)) OVER () AS total FROM hr.visits GROUP BY city', /a window function/],
      [
        'SELECT city, count(*) AS n FROM hr.visits GROUP BY city QUALIFY rank() OVER (ORDER BY n) = 1',
        /a window function or QUALIFY/,
      ],
      ['WITH v AS (SELECT * FROM hr.visits) SELECT count(*) AS n FROM v', /a CTE/],
      ['SELECT count(*) AS n FROM hr.visits UNION ALL SELECT count(*) FROM hr.visits', /a set operation/],
      ['SELECT count(*) AS n FROM (SELECT city, count(*) AS c FROM hr.visits GROUP BY city)', /a second aggregation|a subquery/],
      ['SELECT count(*) AS n FROM (SELECT * FROM hr.visits WHERE amount > 1)', /a subquery in FROM/],
      ['SELECT count(*) AS n FROM hr.visits WHERE city IN (SELECT person FROM sales.orders)', /a subquery/],
      ['SELECT count(*) AS n FROM hr.visits, range(3) r', /the table function range/],
      ['SELECT count(*) AS n FROM hr.visits USING SAMPLE 10 ROWS', /a sample/],
    ];
    for (const [sql, reason] of cases) {
      const refused = await refusal(sql);
      expect({ sql, refused }).toEqual({
        sql,
        refused: expect.stringMatching(/^hr\.visits has an aggregation rule \(at least 3/),
      });
      expect({ sql, refused }).toEqual({ sql, refused: expect.stringMatching(reason) });
    }
    // A private column of a table with a rule is join-only too.
    expect(await refusal('SELECT email, count(*) AS n FROM hr.visits GROUP BY email')).toMatch(/hr\.visits\.email is join-only/);
  });

  it('refuses a rule whose privacy unit is no longer a public column of the table', async () => {
    const stale = (columns: ReadableTable['columns']): ReadableCatalog =>
      new Map([[catalogKey('hr', 'visits'), { ...catalog.get('hr.visits')!, columns }]]);
    expect(await refusal('SELECT count(*) AS n FROM hr.visits', stale([column('city')]))).toMatch(
      /privacy unit customer is no longer a public column/,
    );
    expect(await refusal('SELECT count(*) AS n FROM hr.visits', stale([column('city'), column('customer', true)]))).toMatch(
      /privacy unit customer is no longer a public column/,
    );
    const repeated = { ...column('customer'), repeated: true };
    expect(await refusal('SELECT count(*) AS n FROM hr.visits', stale([column('city'), repeated]))).toMatch(
      /privacy unit customer is no longer a public column of one value a row/,
    );
  });

  it('fails closed on a plan operator it does not know', () => {
    const rule = [{ key: 'hr.visits', rule: { privacyUnit: 'customer', minDistinct: 3 } }];
    const aggregate = {
      type: 'LOGICAL_AGGREGATE_AND_GROUP_BY',
      expressions: [],
      children: [{ type: 'LOGICAL_NEW_THING', children: [] }],
    };
    expect(aggregationRefusal({ type: 'LOGICAL_PROJECTION', children: [aggregate] }, rule)).toMatch(
      /an operator the checker does not know \(LOGICAL_NEW_THING\)/,
    );
    expect(
      aggregationRefusal(
        { ...aggregate, children: [], expressions: [{ expression_class: 'BOUND_FUNCTION', name: 'sum' }] },
        rule,
      ),
    ).toMatch(/an aggregate the checker does not know/);
  });
});

describe('on BigQuery: the GoogleSQL text', () => {
  it('drops comments as GoogleSQL reads them, so that DuckDB checks the text BigQuery runs', () => {
    // DuckDB nests block comments and GoogleSQL does not: here GoogleSQL would run the filter DuckDB sees as a comment.
    const nested = "SELECT count(*) FROM hr.ids /* /* */ WHERE secret = 'x' --*/";
    expect(commonText(nested)).toBe("SELECT count(*) FROM hr.ids   WHERE secret = 'x'  ");
    expect(commonText("SELECT a # note\nFROM t -- x\nWHERE b = 'y'")).toBe("SELECT a  \nFROM t  \nWHERE b = 'y'");
  });

  it('refuses what GoogleSQL and DuckDB read differently', () => {
    for (const sql of [
      'SELECT "secret" FROM hr.ids',
      "SELECT 'it\\'s' FROM hr.ids",
      "SELECT 'a''b' FROM hr.ids",
      "SELECT r'x' FROM hr.ids",
      "SELECT '''x''' FROM hr.ids",
      'SELECT $$x$$ FROM hr.ids',
    ]) {
      expect(() => commonText(sql)).toThrow(QueryFailure);
      expect(() => commonText(sql)).toThrow(/reads differently in GoogleSQL and DuckDB/);
    }
  });

  it('adds the threshold to the top-level HAVING, and counts what it drops', () => {
    const threshold = '(COUNT(DISTINCT `v`.`customer`) >= 3)';
    expect(withThreshold('SELECT city, COUNT(*) AS n FROM `p.d.t` v GROUP BY city ORDER BY n LIMIT 3', threshold)).toEqual({
      sql: 'SELECT city, COUNT(*) AS n FROM `p.d.t` v GROUP BY city  HAVING (COUNT(DISTINCT `v`.`customer`) >= 3) ORDER BY n LIMIT 3',
      suppressedSql:
        'SELECT COUNT(*) AS n FROM (SELECT city, COUNT(*) AS n FROM `p.d.t` v GROUP BY city  HAVING NOT (COUNT(DISTINCT `v`.`customer`) >= 3))',
    });
    expect(withThreshold('SELECT city FROM t v GROUP BY city HAVING COUNT(*) > (1) ORDER BY city', threshold).sql).toBe(
      'SELECT city FROM t v GROUP BY city HAVING CASE WHEN (COUNT(DISTINCT `v`.`customer`) >= 3) THEN ( COUNT(*) > (1) ) ELSE FALSE END ORDER BY city',
    );
    expect(withThreshold('SELECT COUNT(*) FROM t v', threshold).sql).toBe(
      'SELECT COUNT(*) FROM t v HAVING (COUNT(DISTINCT `v`.`customer`) >= 3) ',
    );
  });
});
