/**
 * The clean-room rules over HTTP, with a worker: another tenant's private columns are join-only,
 * its tables' aggregation thresholds hold against small-group attacks, its export policy stops
 * exports, the consumer sees the shared schema and rules (never data), and the owner reads every
 * job another tenant ran over its data in the dataset's access log.
 */
import type { QueryEngine } from '../../src/adapters/warehouse/query/index.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant } from '../fixtures.js';
import { exportJob, finished, ownerAndSharer, type QueryFixture, runToEnd, shareDataset } from './helpers.js';

let ctx: TestContext;
// `owner` owns the project and reads `sharer`'s dataset `hr` shared into it: the consumer.
let owner: QueryFixture;
let sharer: QueryFixture;
let ids: string;
let visits: string;
let cities: string;
const SECRETS = /alice-ssn|bob-ssn/;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  ({ owner, sharer } = await ownerAndSharer(ctx, {
    orders: "INSERT INTO {table} VALUES ('ada', 0.5), ('bob', 0.25)",
    people: "INSERT INTO {table} VALUES ('ada', 100, 'x'), ('bob', NULL, 'y'), ('cy', 300, 'x')",
  }));
  ids = await sharer.table('ids', [
    { name: 'name', type: 'STRING' },
    { name: 'team', type: 'STRING' },
    { name: 'secret', type: 'STRING', private: true },
  ]);
  await sharer.fill(ids, "INSERT INTO {table} VALUES ('alice', 'x', 'alice-ssn-111'), ('bob', 'y', 'bob-ssn-222')");
  visits = await sharer.table('visits', [
    { name: 'customer', type: 'INT64' },
    { name: 'city', type: 'STRING' },
    { name: 'amount', type: 'INT64' },
    { name: 'email', type: 'STRING', private: true },
  ]);
  // City a: customers 1, 2 and 3; city b: customer 4 alone (twice); city c: customers 5 and 6.
  await sharer.fill(
    visits,
    `INSERT INTO {table} VALUES (1, 'a', 10, 'c1@x'), (2, 'a', 20, 'c2@x'), (3, 'a', 30, 'c3@x'), (4, 'b', 400, 'c4@x'),
       (4, 'b', 401, 'c4@x'), (5, 'c', 5, 'c5@x'), (6, 'c', 6, 'c6@x')`,
  );
  cities = await sharer.table('cities', [
    { name: 'city', type: 'STRING' },
    { name: 'shop', type: 'STRING' },
  ]);
  await sharer.fill(cities, "INSERT INTO {table} VALUES ('a', 's1'), ('a', 's2'), ('a', 's3'), ('b', 's4'), ('c', 's5')");
  await shareDataset(ctx, { owner, sharer });
  const guesses = await owner.table('guesses', [{ name: 'guess', type: 'STRING' }]);
  await owner.fill(guesses, "INSERT INTO {table} VALUES ('alice-ssn-111'), ('nobody')");
  const tags = await owner.table('tags', [
    { name: 'customer', type: 'INT64' },
    { name: 'tag', type: 'STRING' },
  ]);
  await owner.fill(
    tags,
    "INSERT INTO {table} VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (1, 'all'), (2, 'all'), (3, 'all')",
  );
}, 60_000);

afterAll(() => ctx?.close());

const rule = (privacyUnit: string, minDistinct: number) => ({
  type: 'aggregation',
  privacy_unit: privacyUnit,
  min_distinct: minDistinct,
});

async function setRule(tableId: string, analysisRule: object | null) {
  const res = await sharer.api.patch(`/api/v1/tables/${tableId}`, { analysis_rule: analysisRule });
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { analysis_rule: analysisRule } });
}

async function rows(jobId: string) {
  const res = await owner.api.get(`/api/v1/query-jobs/${jobId}/results?page_size=200`);
  expect(res.status).toBe(200);
  return (res.body.rows as { data: Record<string, unknown> }[]).map((row) => row.data);
}

/** The consumer's job of `text`, once it ended: FAILED with `reason` (the text named in a mismatch). */
async function consumerFailed(text: string, reason: string) {
  const job = await runToEnd(ctx, owner, owner.tenant, text);
  expect({ text, status: job.status, reason: job.error_result?.reason }).toEqual({ text, status: 'FAILED', reason });
  return job;
}

async function dryRun(fixture: QueryFixture, text: string) {
  const queryId = await fixture.query(text);
  return fixture.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text, dry_run: true });
}

describe('join-only private columns', () => {
  // The issue's pairs: the two answers of each told a value apart; now both are refused alike.
  const PAIRS: [string, string, string][] = [
    [
      'LIKE, for a binary search',
      "SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-1%'",
      "SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-9%'",
    ],
    [
      'ORDER BY ... LIMIT 1',
      'SELECT name FROM hr.ids ORDER BY secret DESC LIMIT 1',
      'SELECT name FROM hr.ids ORDER BY secret LIMIT 1',
    ],
    ['GROUP BY', 'SELECT secret, count(*) AS n FROM hr.ids GROUP BY secret', 'SELECT count(*) AS n FROM hr.ids GROUP BY secret'],
    [
      'JOIN ON',
      "SELECT i.name FROM hr.ids i JOIN (VALUES ('alice-ssn-111')) g(x) ON g.x = i.secret",
      "SELECT i.name FROM hr.ids i JOIN (VALUES ('alice-ssn-112')) g(x) ON g.x = i.secret",
    ],
    [
      'IN',
      "SELECT name FROM hr.ids WHERE secret IN ('alice-ssn-111')",
      "SELECT name FROM hr.ids WHERE secret IN ('alice-ssn-112')",
    ],
    ['INTERSECT', "SELECT secret FROM hr.ids INTERSECT SELECT 'alice-ssn-111'", "SELECT secret FROM hr.ids INTERSECT SELECT 'x'"],
    [
      'QUALIFY',
      'SELECT name FROM hr.ids QUALIFY row_number() OVER (ORDER BY secret) = 1',
      'SELECT name FROM hr.ids QUALIFY row_number() OVER (ORDER BY secret DESC) = 1',
    ],
    [
      'count(*) WHERE, confirming a customer exists',
      "SELECT count(*) AS n FROM hr.ids WHERE secret = 'alice-ssn-111'",
      "SELECT count(*) AS n FROM hr.ids WHERE secret = 'nobody-ssn-000'",
    ],
  ];

  it.each(PAIRS)(
    'refuses both queries of the %s pair before they run, naming the column and the rule',
    async (_name, ...texts) => {
      const messages: string[] = [];
      for (const text of texts) {
        const job = await runToEnd(ctx, owner, owner.tenant, text);
        expect({ text, status: job.status, reason: job.error_result?.reason, rows: job.total_rows }).toEqual({
          text,
          status: 'FAILED',
          reason: 'accessDenied',
          rows: null,
        });
        expect(job.error_result.message).toMatch(/^Column hr\.ids\.secret is join-only for your tenant/);
        expect(JSON.stringify(job)).not.toMatch(SECRETS);
        expect((await owner.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(409);
        // A dry run is refused the same way, at once.
        const dry = await dryRun(owner, text);
        expect({ status: dry.status, body: dry.body }).toEqual({ status: 403, body: { detail: job.error_result.message } });
        messages.push(job.error_result.message);
      }
      // Nothing tells the two apart.
      expect(messages[0]).toBe(messages[1]);
    },
  );

  it("leaves the owner's own queries over its data unrestricted", async () => {
    const job = await runToEnd(ctx, sharer, sharer.tenant, "SELECT name, secret FROM hr.ids WHERE secret LIKE 'alice-ssn-1%'");
    expect(job.status).toBe('DONE');
    const res = await sharer.api.get(`/api/v1/query-jobs/${job.id}/results`);
    expect(res.body.rows).toEqual([{ data: { name: 'alice', secret: 'alice-ssn-111' } }]);
  });

  it('allows equality joins with a table, and returns the column null when selected', async () => {
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT g.guess, i.name, i.secret FROM sales.guesses g JOIN hr.ids i ON g.guess = i.secret',
    );
    expect(job).toMatchObject({ status: 'DONE', total_rows: 1, private_row_count: 1 });
    expect(await rows(job.id)).toEqual([{ guess: 'alice-ssn-111', name: 'alice', secret: null }]);
    const using = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT name FROM hr.ids JOIN (SELECT guess AS secret FROM sales.guesses) USING (secret)',
    );
    expect(await rows(using.id)).toEqual([{ name: 'alice' }]);
  });

  it('refuses joins with guesses the query makes, a column of a table mixed in', async () => {
    for (const text of [
      "SELECT i.name, g.g FROM hr.ids i JOIN (SELECT i2.name || '-ssn-' || r.range AS g FROM hr.ids i2, range(1000) r) g ON g.g = i.secret",
      'SELECT p.name, c.v FROM hr.people p JOIN (SELECT DISTINCT r.range + 0 * length(p2.name) AS v FROM hr.people p2, range(1000) r) c ON c.v = p.salary',
      "SELECT i.name FROM hr.ids i JOIN (SELECT DISTINCT unnest(['alice-ssn-111', i2.name]) AS x FROM hr.ids i2) u ON u.x = i.secret",
    ]) {
      const job = await consumerFailed(text, 'accessDenied');
      expect(job.error_result.message).toMatch(/is join-only for your tenant.*joins it to values the query makes/);
      expect(JSON.stringify(job)).not.toMatch(SECRETS);
    }
  });
});

describe('aggregation thresholds', () => {
  it('shows the rule on the table to both sides, and refuses bad rules in the documented error shape', async () => {
    await setRule(visits, rule('customer', 3));
    for (const fixture of [sharer, owner]) {
      expect((await fixture.api.get(`/api/v1/tables/${visits}`)).body.analysis_rule).toEqual(rule('customer', 3));
    }
    const bad: [object, RegExp][] = [
      [rule('nope', 3), /privacy_unit "nope" is not a column of the table/],
      [rule('email', 3), /privacy_unit "email" is a private column/],
      [rule('customer', 1), />=2/],
      [rule('customer', 0), />=2/],
      [rule('customer', 2.5), /expected int/],
      [{ ...rule('customer', 3), min_distinct: '3' }, /number/],
      [{ ...rule('customer', 3), type: 'differential_privacy' }, /aggregation/],
      [{ ...rule('customer', 3), extra: 1 }, /extra|Unrecognized/i],
      [{ privacy_unit: 'customer' }, /Required|expected/i],
      [rule('cus\u0000tomer', 3), /./],
      [rule('', 3), /./],
    ];
    for (const [analysisRule, message] of bad) {
      const res = await sharer.api.patch(`/api/v1/tables/${visits}`, { analysis_rule: analysisRule });
      expect({ analysisRule, status: res.status }).toEqual({ analysisRule, status: 422 });
      for (const issue of res.body.detail) expect(issue.loc.slice(0, 2)).toEqual(['body', 'analysis_rule']);
      expect((res.body.detail as { msg: string }[]).map((issue) => issue.msg).join(' ')).toMatch(message);
    }
    // Another tenant's table: 404, for the tenant it is shared with as for any other.
    const stranger = await seedTenant(ctx, 'Stranger');
    for (const token of [owner.tenant.admin.token, stranger.admin.token]) {
      const res = await as(ctx.app, token).patch(`/api/v1/tables/${visits}`, { analysis_rule: rule('customer', 2) });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { detail: 'Table not found' } });
    }
    // A column change that the rule would no longer fit: 409.
    const dropped = await sharer.api.patch(`/api/v1/tables/${visits}`, { schema: [{ name: 'city', type: 'STRING' }] });
    expect(dropped.status).toBe(409);
    expect(dropped.body.detail).toMatch(/analysis rule no longer fits/);
    expect((await sharer.api.get(`/api/v1/tables/${visits}`)).body.analysis_rule).toEqual(rule('customer', 3));
  });

  it('drops the groups with fewer distinct privacy units than the rule asks, and reports them', async () => {
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT city, count(*) AS n, sum(amount) AS total FROM hr.visits GROUP BY city ORDER BY city',
    );
    expect(job).toMatchObject({
      status: 'DONE',
      total_rows: 1,
      suppressed_row_count: 2,
      applied_rules: [
        {
          dataset_id: sharer.datasetId,
          table_id: visits,
          name: 'hr.visits',
          tenant_id: sharer.tenant.id,
          join_only_columns: ['email'],
          analysis_rule: rule('customer', 3),
          allow_exports: true,
        },
      ],
    });
    expect(await rows(job.id)).toEqual([{ city: 'a', n: 3, total: 60 }]);
    // Aggregates alone make one group, which the threshold holds for as well.
    const all = await runToEnd(ctx, owner, owner.tenant, 'SELECT count(*) AS n FROM hr.visits');
    expect(await rows(all.id)).toEqual([{ n: 7 }]);
    const one = await runToEnd(ctx, owner, owner.tenant, 'SELECT count(*) AS n FROM hr.visits WHERE customer = 4');
    expect(one).toMatchObject({ status: 'DONE', total_rows: 0, suppressed_row_count: 1 });
    // The owner itself is bound by nothing.
    const own = await runToEnd(ctx, sharer, sharer.tenant, "SELECT customer, amount FROM hr.visits WHERE city = 'b'");
    expect(own).toMatchObject({ status: 'DONE', total_rows: 2, suppressed_row_count: 0, applied_rules: [] });
  });

  it('refuses queries that do not aggregate before they run', async () => {
    for (const text of [
      'SELECT * FROM hr.visits',
      'SELECT amount FROM hr.visits WHERE customer = 4',
      'SELECT DISTINCT city FROM hr.visits',
    ]) {
      const job = await runToEnd(ctx, owner, owner.tenant, text);
      expect({ text, status: job.status, error: job.error_result }).toEqual({
        text,
        status: 'FAILED',
        error: {
          reason: 'accessDenied',
          message: expect.stringMatching(
            /^hr\.visits has an aggregation rule \(at least 3 distinct privacy units in every group\): its owner allows only aggregating queries/,
          ),
        },
      });
    }
  });

  it('holds against small-group attacks', async () => {
    // HAVING count(*) = 1 picks the groups of one: the threshold drops them first.
    const single = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT customer, sum(amount) AS total FROM hr.visits GROUP BY customer HAVING count(*) = 1',
    );
    expect(single).toMatchObject({ status: 'DONE', total_rows: 0, suppressed_row_count: 6 });
    const groupOfOne = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      "SELECT city, sum(amount) AS total FROM hr.visits WHERE city = 'b' GROUP BY city HAVING count(*) >= 1",
    );
    expect(groupOfOne).toMatchObject({ status: 'DONE', total_rows: 0, suppressed_row_count: 1 });
    // Differences of two aggregates, each over a group large enough, that leave one customer's amount.
    for (const text of [
      'SELECT (SELECT sum(amount) FROM hr.visits) - (SELECT sum(amount) FROM hr.visits WHERE customer <> 4) AS d',
      'SELECT sum(amount) - sum(amount) FILTER (WHERE customer <> 4) AS d FROM hr.visits',
      'SELECT sum(amount) - sum(CASE WHEN customer <> 4 THEN amount END) AS d FROM hr.visits',
      'WITH big AS (SELECT city, sum(amount) AS s FROM hr.visits GROUP BY city) SELECT max(s) - min(s) AS d FROM big',
      'SELECT city, sum(amount) - lag(sum(amount)) OVER (ORDER BY city) AS d FROM hr.visits GROUP BY city',
      'SELECT city, max(amount) AS top FROM hr.visits GROUP BY city',
      // Each level of a ROLLUP meets the threshold; the total minus the groups shown is customer 4 alone.
      "SELECT sum(amount) AS total, city FROM hr.visits WHERE city IN ('a', 'b') GROUP BY ROLLUP (city)",
      // TRY_CAST inside an aggregate nulls the values that do not fit: a filter that tests one value.
      "SELECT city, count(TRY_CAST(CAST(amount AS VARCHAR) AS ENUM('20'))) AS is_20 FROM hr.visits GROUP BY city",
      // A column alias list would make the threshold count amount as the privacy unit.
      'SELECT v.amount AS c, v.city, sum(v.customer) AS t FROM hr.visits AS v(amount, city, customer, email) GROUP BY v.amount, v.city',
    ]) {
      const job = await consumerFailed(text, 'accessDenied');
      expect(job.error_result.message).toMatch(/^hr\.visits has an aggregation rule/);
      expect(job.error_result.message).not.toMatch(/allows only aggregating/);
    }
    // Joins that split groups into single customers: every reference to the table must reach the threshold.
    const tagged = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT t.tag, sum(v.amount) AS total FROM hr.visits v JOIN sales.tags t ON t.customer = v.customer GROUP BY t.tag ORDER BY t.tag',
    );
    expect(tagged).toMatchObject({ status: 'DONE', total_rows: 1, suppressed_row_count: 4 });
    expect(await rows(tagged.id)).toEqual([{ tag: 'all', total: 60 }]);
    // A self-join: its two references, filtered apart, differ by one customer (400 + 401) in a group of six.
    for (const text of [
      'SELECT a.customer, count(*) AS n FROM hr.visits a JOIN hr.visits b ON a.city = b.city GROUP BY a.customer',
      'SELECT sum(a.amount) - sum(b.amount) AS d FROM hr.visits a LEFT JOIN hr.visits b ON b.customer = a.customer AND b.amount = a.amount AND b.customer <> 4',
      'SELECT sum(a.amount) / count(DISTINCT b.customer) AS d FROM hr.visits a, hr.visits b WHERE b.customer <> 4',
      'SELECT count(*) - count(b.customer) AS d FROM hr.visits a LEFT JOIN hr.visits AS b USING (customer, amount, city) WHERE b.customer IS NULL OR b.customer <> 4',
    ]) {
      const job = await consumerFailed(text, 'accessDenied');
      expect(job.error_result.message).toMatch(
        /^hr\.visits has an aggregation rule .*: a query that reads it must be one SELECT/,
      );
      expect(job.error_result.message).toContain('This query has hr.visits more than once (a self-join)');
    }
  });

  it("never lets the caller's HAVING, or a failure's message, see a group or row the threshold keeps back", async () => {
    // A HAVING that fails on a dropped group would tell its sum, a bound at a time: it is evaluated for kept groups only.
    for (const bound of [800, 5000]) {
      const job = await runToEnd(
        ctx,
        owner,
        owner.tenant,
        `SELECT count(*) AS n FROM hr.visits WHERE customer = 4 HAVING CASE WHEN sum(amount) > ${bound} THEN error('over') ELSE true END`,
      );
      expect({ bound, job }).toMatchObject({ bound, job: { status: 'DONE', total_rows: 0, suppressed_row_count: 1 } });
    }
    // A table with a rule and no private column: a failure shows its class and position, not the row it failed on.
    await setRule(cities, rule('shop', 2));
    try {
      for (const text of [
        "SELECT count(*) AS n FROM hr.cities WHERE city = 'b' AND error('row ' || shop)",
        "SELECT city, count(*) AS n FROM hr.cities GROUP BY city HAVING count(*) >= 3 OR error('group ' || city || ' ' || count(*))",
        "SELECT sum(CAST(shop AS INTEGER)) AS s FROM hr.cities WHERE city = 'b'",
      ]) {
        const job = await consumerFailed(text, 'invalidQuery');
        expect(job.error_result.message).toMatch(/The details are withheld/);
        expect(JSON.stringify(job.error_result)).not.toMatch(/s4|group [bc]/);
      }
    } finally {
      await setRule(cities, null);
    }
  });

  it('applies the strictest threshold where tables with rules meet', async () => {
    await setRule(cities, rule('shop', 4));
    const job = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT v.city, count(*) AS n FROM hr.visits v JOIN hr.cities c ON c.city = v.city GROUP BY v.city',
    );
    // City a has 3 customers and 3 shops: enough for the visits rule (3), not for the strictest (4).
    expect(job).toMatchObject({ status: 'DONE', total_rows: 0, suppressed_row_count: 3 });
    expect(
      job.applied_rules.map((applied: { name: string; analysis_rule: object }) => [applied.name, applied.analysis_rule]),
    ).toEqual([
      ['hr.visits', rule('customer', 3)],
      ['hr.cities', rule('shop', 4)],
    ]);
    await setRule(cities, null);
    expect((await owner.api.get(`/api/v1/tables/${cities}`)).body.analysis_rule).toBeNull();
  });

  it('answers a dry run with the cost, the tables and the rules, making no job and charging nothing', async () => {
    const text = 'SELECT city, count(*) AS n FROM hr.visits JOIN sales.tags USING (customer) GROUP BY city';
    const jobsBefore = await ctx.db.queryJob.count();
    const usageBefore = await ctx.db.queryUsage.findUnique({ where: { tenantId: owner.tenant.id } });
    const res = await dryRun(owner, text);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: {
        total_bytes_processed: expect.any(Number),
        total_bytes_billed: 2 * 10 * 2 ** 20,
        // 20 MB at 6.25 USD a TiB.
        cost_usd: '0.000119',
        referenced_tables: [
          { dataset_id: sharer.datasetId, table_id: visits, name: 'hr.visits' },
          { dataset_id: owner.datasetId, table_id: expect.any(String), name: 'sales.tags' },
        ],
        rules: [expect.objectContaining({ table_id: visits, analysis_rule: rule('customer', 3), join_only_columns: ['email'] })],
      },
    });
    // customer (8 bytes a value) and city (its length + 2) of the 7 visits, customer of the 7 tags.
    expect(res.body.total_bytes_processed).toBe(7 * 8 + 7 * 3 + 7 * 8);
    expect(await ctx.db.queryJob.count()).toBe(jobsBefore);
    expect(await ctx.db.queryUsage.findUnique({ where: { tenantId: owner.tenant.id } })).toEqual(usageBefore);
    // Refused the way a run would be.
    const refused = await dryRun(owner, 'SELECT * FROM hr.visits');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/allows only aggregating queries/);
    const invalid = await dryRun(owner, 'SELECT nope FROM sales.tags');
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toMatch(/Binder Error/);
    // The saved text decides, as for a run.
    const queryId = await owner.query(text);
    const differs = await owner.api.post('/api/v1/queries/run', { query_id: queryId, query_text: `${text} `, dry_run: true });
    expect(differs.status).toBe(409);
    const wrongType = await owner.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text, dry_run: 'yes' });
    expect(wrongType.status).toBe(422);
  });

  it('keeps the rule a job started with when the owner changes it meanwhile, and says which it applied', async () => {
    const engine = ctx.deps.queryEngine;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The worker has read the rules (the job started); the query waits until the owner has changed them.
    const paused: QueryEngine = {
      ...engine,
      run: async (request) => {
        started();
        await gate;
        return engine.run(request);
      },
    };
    ctx.deps.queryEngine = paused;
    try {
      const text = 'SELECT city, count(*) AS n FROM hr.visits GROUP BY city ORDER BY city';
      const queryId = await owner.query(text);
      const run = await owner.api.post('/api/v1/queries/run', { query_id: queryId, query_text: text });
      expect(run.status).toBe(202);
      await running;
      await setRule(visits, rule('customer', 2));
      release();
      const job = await finished(ctx, owner.tenant.editor.token, run.body.job_id);
      expect(job).toMatchObject({ status: 'DONE', total_rows: 1, suppressed_row_count: 2 });
      expect(job.applied_rules[0].analysis_rule).toEqual(rule('customer', 3));
      const log = await as(ctx.app, sharer.tenant.admin.token).get(
        `/api/v1/datasets/${sharer.datasetId}/access-log?page_size=100`,
      );
      const entry = log.body.items.find((item: { job_id: string }) => item.job_id === job.id);
      expect(entry.applied_rules).toEqual([expect.objectContaining({ table_id: visits, analysis_rule: rule('customer', 3) })]);
    } finally {
      ctx.deps.queryEngine = engine;
    }
    // The next job applies the rule as it is now.
    const after = await runToEnd(
      ctx,
      owner,
      owner.tenant,
      'SELECT city, count(*) AS n FROM hr.visits GROUP BY city ORDER BY city',
    );
    expect(after).toMatchObject({ status: 'DONE', total_rows: 2, suppressed_row_count: 1 });
    await setRule(visits, rule('customer', 3));
  });
});

describe('what each side sees', () => {
  it('shows the consumer the schema and rules of what was shared, never to others', async () => {
    const stranger = await seedTenant(ctx, 'Onlooker');
    for (const member of [owner.tenant.admin, owner.tenant.editor, owner.tenant.user]) {
      const client = as(ctx.app, member.token);
      const listed = await client.get(`/api/v1/datasets/${sharer.datasetId}/tables`);
      expect(listed.status).toBe(200);
      expect(listed.body.tables.map((table: { name: string }) => table.name)).toEqual(['people', 'ids', 'visits', 'cities']);
      const table = await client.get(`/api/v1/tables/${ids}`);
      expect({ status: table.status, body: table.body }).toMatchObject({
        status: 200,
        body: {
          id: ids,
          tenant_id: sharer.tenant.id,
          dataset_id: sharer.datasetId,
          name: 'ids',
          analysis_rule: null,
          schema: [
            { name: 'name', type: 'STRING', mode: 'NULLABLE', private: false },
            { name: 'team', type: 'STRING', mode: 'NULLABLE', private: false },
            { name: 'secret', type: 'STRING', mode: 'NULLABLE', private: true },
          ],
        },
      });
      expect(JSON.stringify(listed.body)).not.toMatch(SECRETS);
      // Its own lists stay its own.
      expect(
        (await client.get('/api/v1/tables?limit=1000')).body.tables.every(
          (t: { tenant_id: string }) => t.tenant_id === owner.tenant.id,
        ),
      ).toBe(true);
    }
    for (const path of [`/api/v1/datasets/${sharer.datasetId}/tables`, `/api/v1/tables/${ids}`]) {
      expect((await as(ctx.app, stranger.admin.token).get(path)).status).toBe(404);
    }
  });

  it("gives the owner's Org admins the log of every job other tenants ran over the dataset", async () => {
    // Refused or failed by the check itself, before any rule: a function not allowed, a column unknown, two statements.
    const checkRefused = [
      "SELECT name FROM hr.ids WHERE secret = current_setting('threads')",
      'SELECT nosuch FROM hr.ids',
      'WITH t AS (SELECT name FROM hr.ids TABLESAMPLE 50%) SELECT * FROM t; SELECT 1',
    ];
    for (const text of checkRefused) expect((await runToEnd(ctx, owner, owner.tenant, text)).status).toBe('FAILED');
    const admin = as(ctx.app, sharer.tenant.admin.token);
    const log = await admin.get(`/api/v1/datasets/${sharer.datasetId}/access-log?page=1&page_size=100`);
    expect(log.status).toBe(200);
    const jobs = await ctx.db.queryJob.findMany({ where: { tenantId: owner.tenant.id, reads: { some: {} } } });
    expect(log.body.total).toBe(jobs.length);
    expect(log.body.items).toHaveLength(jobs.length);
    // Newest first; refused jobs too; none of the owner's own.
    expect(log.body.items.map((item: { job_id: string }) => item.job_id)).toEqual(
      jobs.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id)).map((job) => job.id),
    );
    expect(log.body.items.every((item: { tenant_id: string }) => item.tenant_id === owner.tenant.id)).toBe(true);
    const refused = log.body.items.find(
      (item: { query_text: string }) => item.query_text === "SELECT name FROM hr.ids WHERE secret LIKE 'alice-ssn-1%'",
    );
    for (const text of checkRefused) {
      expect({ text, entry: log.body.items.find((item: { query_text: string }) => item.query_text === text) }).toMatchObject({
        text,
        entry: { status: 'FAILED', applied_rules: [{ table_id: ids, join_only_columns: ['secret'] }] },
      });
    }
    expect(refused).toMatchObject({
      tenant_name: 'Owner',
      user_email: owner.tenant.editor.email,
      status: 'FAILED',
      total_rows: null,
      applied_rules: [{ table_id: ids, join_only_columns: ['secret'], analysis_rule: null }],
      exports: [],
    });
    const grouped = log.body.items.find((item: { query_text: string }) =>
      item.query_text.startsWith('SELECT city, count(*) AS n, sum(amount) AS total FROM hr.visits'),
    );
    expect(grouped).toMatchObject({
      status: 'DONE',
      total_rows: 1,
      suppressed_row_count: 2,
      total_bytes_processed: expect.any(Number),
      created_at: expect.any(String),
      applied_rules: [expect.objectContaining({ table_id: visits, analysis_rule: rule('customer', 3) })],
    });
    // Exports made of a job show in its entry.
    const exported = await exportJob(ctx, owner, grouped.job_id, 'CSV', 'NONE');
    const again = await admin.get(`/api/v1/datasets/${sharer.datasetId}/access-log?page_size=100`);
    expect(again.body.items.find((item: { job_id: string }) => item.job_id === grouped.job_id).exports).toEqual([
      expect.objectContaining({ id: exported.id, status: 'DONE', format: 'CSV', compression: 'NONE' }),
    ]);
    // Pages.
    const second = await admin.get(`/api/v1/datasets/${sharer.datasetId}/access-log?page=2&page_size=1`);
    expect(second.body).toMatchObject({
      page: 2,
      page_size: 1,
      total: jobs.length,
      items: [{ job_id: log.body.items[1].job_id }],
    });
    for (const query of ['page=0', 'page_size=101', 'page=x', 'page=1%00']) {
      expect((await admin.get(`/api/v1/datasets/${sharer.datasetId}/access-log?${query}`)).status).toBe(422);
    }
    // Other roles of the owner: 403; the consumer's admin: 404. Deleting the consumer's queries leaves the log as it was.
    expect((await as(ctx.app, sharer.tenant.editor.token).get(`/api/v1/datasets/${sharer.datasetId}/access-log`)).status).toBe(
      403,
    );
    expect((await as(ctx.app, owner.tenant.admin.token).get(`/api/v1/datasets/${sharer.datasetId}/access-log`)).status).toBe(404);
    const query = await ctx.db.queryJob.findUniqueOrThrow({ where: { id: grouped.job_id } });
    expect((await owner.api.delete(`/api/v1/queries/${query.queryId}`)).status).toBe(204);
    const kept = await admin.get(`/api/v1/datasets/${sharer.datasetId}/access-log?page_size=100`);
    expect(kept.body.total).toBe(jobs.length);
    // The consumer's own dataset has no log of the owner's.
    const own = await as(ctx.app, owner.tenant.admin.token).get(`/api/v1/datasets/${owner.datasetId}/access-log`);
    expect(own.body.items.every((item: { tenant_id: string }) => item.tenant_id !== owner.tenant.id)).toBe(true);
  });

  it("keeps in the owner's log who ran a job as they were then, whatever the consumer renames later", async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT name FROM hr.ids');
    const entry = async () =>
      (
        await as(ctx.app, sharer.tenant.admin.token).get(`/api/v1/datasets/${sharer.datasetId}/access-log?page_size=100`)
      ).body.items.find((item: { job_id: string }) => item.job_id === job.id);
    expect(await entry()).toMatchObject({ tenant_name: 'Owner', user_email: owner.tenant.editor.email });
    const { editor, admin } = owner.tenant;
    // Every user may change its own e-mail, and an Org admin its tenant's name: neither rewrites the log.
    expect(
      (await as(ctx.app, editor.token).put(`/api/v1/users/${editor.id}`, { email: 'someone@else.test', name: 'x' })).status,
    ).toBe(200);
    expect((await as(ctx.app, admin.token).patch(`/api/v1/tenants/${owner.tenant.id}`, { name: 'Not The Owner' })).status).toBe(
      200,
    );
    try {
      expect(await entry()).toMatchObject({ tenant_name: 'Owner', user_email: editor.email });
      // A job asked for after the change shows the new ones.
      const later = await runToEnd(ctx, owner, owner.tenant, 'SELECT team FROM hr.ids');
      const log = await as(ctx.app, sharer.tenant.admin.token).get(
        `/api/v1/datasets/${sharer.datasetId}/access-log?page_size=100`,
      );
      expect(log.body.items.find((item: { job_id: string }) => item.job_id === later.id)).toMatchObject({
        tenant_name: 'Not The Owner',
        user_email: 'someone@else.test',
      });
    } finally {
      await as(ctx.app, editor.token).put(`/api/v1/users/${editor.id}`, { email: editor.email, name: 'x' });
      await as(ctx.app, admin.token).patch(`/api/v1/tenants/${owner.tenant.id}`, { name: 'Owner' });
    }
  });
});

describe('export policy', () => {
  it('answers 403 to exports and download URLs of jobs that read a dataset whose owner allows none', async () => {
    const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT name, team FROM hr.ids ORDER BY name');
    const made = await exportJob(ctx, owner, job.id, 'CSV', 'NONE');
    expect(made.status).toBe('DONE');
    const ownJob = await runToEnd(ctx, owner, owner.tenant, 'SELECT person FROM sales.orders');
    const policy = await sharer.api.patch(`/api/v1/datasets/${sharer.datasetId}`, { share_policy: { allow_exports: false } });
    expect({ status: policy.status, share_policy: policy.body.share_policy }).toEqual({
      status: 200,
      share_policy: { allow_exports: false },
    });
    const refused = await owner.api.post(`/api/v1/query-jobs/${job.id}/exports`, { format: 'CSV', compression: 'NONE' });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 403,
      body: {
        detail: expect.stringMatching(
          /^Exports of this job's result are not allowed: it read dataset "hr" of another tenant, whose owner does not allow exports/,
        ),
      },
    });
    expect((await owner.api.get(`/api/v1/exports/${made.id}/download-url`)).status).toBe(403);
    // Its pages can still be read, and jobs that did not read the dataset export as before.
    expect((await owner.api.get(`/api/v1/query-jobs/${job.id}/results`)).status).toBe(200);
    expect((await exportJob(ctx, owner, ownJob.id, 'CSV', 'NONE')).status).toBe('DONE');
    // Bad policies: the documented shape.
    for (const body of [
      { share_policy: { allow_exports: 'no' } },
      { share_policy: { allow_exports: false, other: 1 } },
      { share_policy: 'off' },
    ]) {
      expect((await sharer.api.patch(`/api/v1/datasets/${sharer.datasetId}`, body)).status).toBe(422);
    }
    expect(
      (await owner.api.patch(`/api/v1/datasets/${sharer.datasetId}`, { share_policy: { allow_exports: true } })).status,
    ).toBe(404);
    await sharer.api.patch(`/api/v1/datasets/${sharer.datasetId}`, { share_policy: { allow_exports: true } });
    expect((await owner.api.get(`/api/v1/exports/${made.id}/download-url`)).status).toBe(200);
  });
});

test('the consumer sees nothing of the dataset once the share ends', async () => {
  const removed = await as(ctx.app, owner.tenant.admin.token).delete(
    `/api/v1/projects/${owner.projectId}/shared-datasets/${sharer.datasetId}`,
  );
  expect(removed.status).toBe(204);
  expect((await owner.api.get(`/api/v1/datasets/${sharer.datasetId}/tables`)).status).toBe(404);
  expect((await owner.api.get(`/api/v1/tables/${visits}`)).status).toBe(404);
  // The owner's log keeps what was run.
  const log = await as(ctx.app, sharer.tenant.admin.token).get(`/api/v1/datasets/${sharer.datasetId}/access-log`);
  expect(log.body.total).toBeGreaterThan(0);
});
