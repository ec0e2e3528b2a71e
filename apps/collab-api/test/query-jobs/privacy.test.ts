import { as, createTestContext, type TestContext } from '../context.js';
import { finished, ownerAndSharer, type QueryFixture, runToEnd, shareDataset } from './helpers.js';

let ctx: TestContext;
let owner: QueryFixture;
let sharer: QueryFixture;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.startWorker();
  ({ owner, sharer } = await ownerAndSharer(ctx, {
    orders: "INSERT INTO {table} VALUES ('ada', 0.5), ('bob', 0.25)",
    people: "INSERT INTO {table} VALUES ('ada', 100, 'x'), ('bob', NULL, 'y'), ('cy', 300, 'x')",
  }));
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
  it("masks another tenant's private columns, and everything computed from them", async () => {
    const { job, result } = await page(
      owner,
      'SELECT name, salary, salary * 2 AS doubled, upper(name) AS loud, team FROM hr.people ORDER BY name',
    );
    expect(result.column_privacy).toEqual({
      name: 'public',
      salary: 'private',
      doubled: 'private',
      loud: 'public',
      team: 'public',
    });
    expect(result.rows.map((row: { data: object }) => row.data)).toEqual([
      { name: 'ada', salary: null, doubled: null, loud: 'ADA', team: 'x' },
      { name: 'bob', salary: null, doubled: null, loud: 'BOB', team: 'y' },
      { name: 'cy', salary: null, doubled: null, loud: 'CY', team: 'x' },
    ]);
    // bob had no salary: nothing was hidden in that row.
    expect(job.private_row_count).toBe(2);
  });

  it('follows columns through stars, CTEs, subqueries, aggregates, joins and unions', async () => {
    const cases: [string, Record<string, string>][] = [
      ['WITH x AS (SELECT * FROM hr.people) SELECT * FROM x', { name: 'public', salary: 'private', team: 'public' }],
      ['SELECT * EXCLUDE (salary) FROM hr.people', { name: 'public', team: 'public' }],
      [
        'SELECT team, sum(salary) AS total, count(*) AS n FROM hr.people GROUP BY team',
        { team: 'public', total: 'private', n: 'public' },
      ],
      ['SELECT s FROM (SELECT salary AS s FROM hr.people) AS sub', { s: 'private' }],
      ['SELECT name FROM hr.people UNION ALL SELECT CAST(salary AS VARCHAR) FROM hr.people', { name: 'private' }],
      [
        'SELECT p.name, o.margin, p.salary FROM hr.people p JOIN sales.orders o ON o.person = p.name',
        { name: 'public', margin: 'public', salary: 'private' },
      ],
      ['SELECT (SELECT max(salary) FROM hr.people) AS top', { top: 'private' }],
      ['SELECT salary AS s, s + 1 AS t FROM hr.people', { s: 'private', t: 'private' }],
      ['SELECT p AS whole FROM hr.people p', { whole: 'private' }],
      // Shapes that are not followed column by column are masked whole once they read a masked column.
      ['SELECT COLUMNS(*) FROM hr.people', { name: 'private', salary: 'private', team: 'private' }],
      ['SELECT COLUMNS(*) FROM sales.orders', { person: 'public', margin: 'public' }],
      // BY NAME is followed conservatively: every column, once one is masked.
      [
        'SELECT salary AS x, name FROM hr.people UNION ALL BY NAME SELECT name, 1 AS x FROM hr.people',
        { x: 'private', name: 'private' },
      ],
      ['SELECT people.name, to_json(people) AS j FROM hr.people', { name: 'public', j: 'private' }],
    ];
    for (const [text, privacy] of cases) {
      const { result } = await page(owner, text);
      expect({ text, privacy: result.column_privacy }).toEqual({ text, privacy });
      for (const row of result.rows as { data: Record<string, unknown> }[]) {
        for (const [column, kind] of Object.entries(privacy)) if (kind === 'private') expect(row.data[column]).toBeNull();
      }
    }
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
