import { as, createTestContext, type TestContext } from '../context.js';
import { load } from '../load-jobs/helpers.js';
import { downloadExport, exportJob, finished, ownerAndSharer, type QueryFixture, runToEnd, shareDataset } from './helpers.js';

let ctx: TestContext;
let owner: QueryFixture;
let sharer: QueryFixture;
// The sharer's `hr.ids`: its third column is private.
let ids: string;
const SECRETS = /alice-ssn|bob-ssn|ssn-111|ssn-222/;

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
  await shareDataset(ctx, { owner, sharer });
}, 60_000);

afterAll(() => ctx?.close());

async function page(fixture: QueryFixture, text: string, token = fixture.tenant.editor.token) {
  const queryId = (await as(ctx.app, token).post('/api/v1/queries', { query_text: text, project_id: owner.projectId })).body.id;
  const run = await as(ctx.app, token).post('/api/v1/queries/run', { query_id: queryId, query_text: text });
  expect(run.status).toBe(202);
  const job = await finished(ctx, token, run.body.job_id);
  expect({ status: job.status, error: job.error_result }).toEqual({ status: 'DONE', error: null });
  const result = await as(ctx.app, token).get(`/api/v1/query-jobs/${job.id}/results`);
  return { job, result: result.body };
}

describe('privacy', () => {
  it("masks another tenant's private columns selected as they are, and refuses computing on them", async () => {
    const { job, result } = await page(owner, 'SELECT name, salary, upper(name) AS loud, team FROM hr.people ORDER BY name');
    expect(result.column_privacy).toEqual({ name: 'public', salary: 'private', loud: 'public', team: 'public' });
    expect(result.rows.map((row: { data: object }) => row.data)).toEqual([
      { name: 'ada', salary: null, loud: 'ADA', team: 'x' },
      { name: 'bob', salary: null, loud: 'BOB', team: 'y' },
      { name: 'cy', salary: null, loud: 'CY', team: 'x' },
    ]);
    // bob had no salary: nothing was hidden in that row.
    expect(job.private_row_count).toBe(2);
    const refused = await runToEnd(ctx, owner, owner.tenant, 'SELECT name, salary * 2 AS doubled FROM hr.people');
    expect(refused).toMatchObject({
      status: 'FAILED',
      error_result: { reason: 'accessDenied', message: expect.stringMatching(/^Column hr\.people\.salary is join-only/) },
      total_rows: null,
    });
  });

  it('follows columns through stars, CTEs, subqueries and joins; aggregates, unions and whole rows of them are refused', async () => {
    const cases: [string, Record<string, string>][] = [
      ['WITH x AS (SELECT * FROM hr.people) SELECT * FROM x', { name: 'public', salary: 'private', team: 'public' }],
      ['SELECT * EXCLUDE (salary) FROM hr.people', { name: 'public', team: 'public' }],
      ['SELECT team, count(*) AS n FROM hr.people GROUP BY team', { team: 'public', n: 'public' }],
      ['SELECT s FROM (SELECT salary AS s FROM hr.people) AS sub', { s: 'private' }],
      [
        'SELECT p.name, o.margin, p.salary FROM hr.people p JOIN sales.orders o ON o.person = p.name',
        { name: 'public', margin: 'public', salary: 'private' },
      ],
      ['SELECT COLUMNS(*) FROM hr.people', { name: 'public', salary: 'private', team: 'public' }],
      ['SELECT COLUMNS(*) FROM sales.orders', { person: 'public', margin: 'public' }],
    ];
    for (const [text, privacy] of cases) {
      const { result } = await page(owner, text);
      expect({ text, privacy: result.column_privacy }).toEqual({ text, privacy });
      for (const row of result.rows as { data: Record<string, unknown> }[]) {
        for (const [column, kind] of Object.entries(privacy)) if (kind === 'private') expect(row.data[column]).toBeNull();
      }
    }
    for (const text of [
      'SELECT team, sum(salary) AS total FROM hr.people GROUP BY team',
      'SELECT name FROM hr.people UNION ALL SELECT CAST(salary AS VARCHAR) FROM hr.people',
      'SELECT (SELECT max(salary) FROM hr.people) AS top',
      'SELECT salary AS s, s + 1 AS t FROM hr.people',
      'SELECT p AS whole FROM hr.people p',
      'SELECT people.name, to_json(people) AS j FROM hr.people',
    ]) {
      const job = await runToEnd(ctx, owner, owner.tenant, text);
      expect({ text, status: job.status, error: job.error_result }).toEqual({
        text,
        status: 'FAILED',
        error: { reason: 'accessDenied', message: expect.stringMatching(/^Column hr\.people\.salary is join-only/) },
      });
    }
  });

  it('resolves positional references before deciding what is private, in pages and exports alike', async () => {
    const { job, result } = await page(owner, 'SELECT #3 FROM hr.ids ORDER BY name');
    expect(result.column_privacy).toEqual({ secret: 'private' });
    expect(result.rows.map((row: { data: object }) => row.data)).toEqual([{ secret: null }, { secret: null }]);
    expect(job.private_row_count).toBe(2);
    const done = await exportJob(ctx, owner, job.id, 'CSV', 'NONE');
    expect(done.status).toBe('DONE');
    expect((await downloadExport(ctx, owner, done.id)).toString('utf8')).toBe('secret\n\n\n');
    for (const [text, privacy] of [
      ['SELECT #1, #2, #3 FROM hr.ids', { name: 'public', team: 'public', secret: 'private' }],
      ["SELECT COLUMNS('^s') FROM hr.ids", { secret: 'private' }],
      ['WITH c(a, b) AS (SELECT secret, name FROM hr.ids) SELECT b, a FROM c', { b: 'public', a: 'private' }],
    ] as [string, Record<string, string>][]) {
      const { job: each, result: rows } = await page(owner, text);
      expect({ text, privacy: rows.column_privacy }).toEqual({ text, privacy });
      expect(JSON.stringify(rows)).not.toMatch(SECRETS);
      expect(each.private_row_count).toBeGreaterThan(0);
    }
    // Positions name the private column as surely as its name does.
    for (const text of ['SELECT #3 FROM hr.ids ORDER BY #1', 'SELECT secret, count(*) AS n FROM hr.ids GROUP BY 1']) {
      const refused = await runToEnd(ctx, owner, owner.tenant, text);
      expect({ text, reason: refused.error_result?.reason }).toEqual({ text, reason: 'accessDenied' });
      expect(refused.error_result.message).toMatch(/^Column hr\.ids\.secret is join-only/);
    }
  });

  it("never shows a value in the failure of a job that reads another tenant's table with private columns", async () => {
    // The private column cannot reach a function any more (join-only); a public one of the same table can fail, with its value withheld.
    const cases: [string, RegExp][] = [
      ['SELECT error(name) FROM hr.ids', /^Invalid Input Error\. /],
      ['SELECT CAST(name AS INTEGER) FROM hr.ids', /^Conversion Error at line 1, column 8\. /],
      ['SELECT team\nFROM hr.ids\nWHERE CAST(name AS INTEGER) > 0', /^Conversion Error at line 3, column 7\. /],
      ['SELECT name::DATE FROM hr.ids', /^Conversion Error at line 1, column 12\. /],
      ["SELECT json_extract(name, '$.a') FROM hr.ids", /^Invalid Input Error\. /],
      ["SELECT strptime(name, '%Y') FROM hr.ids", /^Invalid Input Error\. /],
    ];
    for (const [text, message] of cases) {
      const job = await runToEnd(ctx, owner, owner.tenant, text);
      expect({ text, status: job.status, reason: job.error_result?.reason }).toEqual({
        text,
        status: 'FAILED',
        reason: 'invalidQuery',
      });
      expect({ text, message: job.error_result.message }).toEqual({ text, message: expect.stringMatching(message) });
      expect(job.error_details).toEqual({ errors: [job.error_result] });
      expect(JSON.stringify(job)).not.toMatch(SECRETS);
      expect(JSON.stringify(job)).not.toMatch(/alice|bob/);
    }
    // A job on the tenant's own data keeps DuckDB's message, values and all.
    const own = await runToEnd(ctx, owner, owner.tenant, 'SELECT CAST(person AS INTEGER) FROM sales.orders');
    expect(own.error_result.message).toMatch(/^Conversion Error: Could not convert string 'ada' to INT32/);
  });

  it('keeps private flags through loads with autodetect, so the other tenant still reads them masked', async () => {
    const token = sharer.tenant.editor.token;
    const csv = 'name,team,secret\ncy,z,cy-ssn-333\n';
    const append = await load(ctx, token, ids, { fileName: 'more.csv', content: csv, autodetect: true });
    expect(append).toMatchObject({ status: 'Completed', statistics: { rows_loaded: 1 } });
    const schema = async () => (await sharer.api.get(`/api/v1/tables/${ids}`)).body.schema;
    expect((await schema()).map((field: { name: string; private: boolean }) => [field.name, field.private])).toEqual([
      ['name', false],
      ['team', false],
      ['secret', true],
    ]);
    const after = await page(owner, 'SELECT * FROM hr.ids ORDER BY name');
    expect(after.result.column_privacy).toEqual({ name: 'public', team: 'public', secret: 'private' });
    expect(JSON.stringify(after.result)).not.toMatch(/ssn/);
    // Replacing the rows and the columns keeps the flag of a column that remains; a new column comes in public.
    const replace = await load(ctx, token, ids, {
      fileName: 'new.csv',
      content: 'secret,extra\nalice-ssn-111,1\n',
      autodetect: true,
      write_disposition: 'WRITE_TRUNCATE',
    });
    expect(replace.status).toBe('Completed');
    expect((await schema()).map((field: { name: string; private: boolean }) => [field.name, field.private])).toEqual([
      ['secret', true],
      ['extra', false],
    ]);
    const replaced = await page(owner, 'SELECT * FROM hr.ids');
    expect(replaced.result.rows).toEqual([{ data: { secret: null, extra: 1 } }]);
  });

  it("does not mask a tenant's own private columns", async () => {
    const { job, result } = await page(owner, 'SELECT person, margin FROM sales.orders ORDER BY person');
    expect(result.column_privacy).toEqual({ person: 'public', margin: 'public' });
    expect(result.rows[0].data).toEqual({ person: 'ada', margin: 0.5 });
    expect(job.private_row_count).toBe(0);
    // The invited tenant reads its own dataset in the project unmasked, and the owner's private column masked.
    const theirs = await page(sharer, 'SELECT name, salary FROM hr.people ORDER BY name', sharer.tenant.editor.token);
    expect(theirs.result.rows[0].data).toEqual({ name: 'ada', salary: 100 });
    const ours = await page(sharer, 'SELECT person, margin FROM sales.orders ORDER BY person', sharer.tenant.editor.token);
    expect(ours.result.column_privacy).toEqual({ person: 'public', margin: 'private' });
    expect(ours.job.tenant_id).toBe(sharer.tenant.id);
  });
});

test('a job reads the shared dataset only while it is shared', async () => {
  await ctx.db.projectDataset.deleteMany({ where: { datasetId: sharer.datasetId } });
  const job = await runToEnd(ctx, owner, owner.tenant, 'SELECT name FROM hr.people');
  expect(job.error_result).toMatchObject({ reason: 'accessDenied' });
});
