/**
 * A load that needs more memory than DuckDB may use (COLLAB_DUCKDB_MEMORY_LIMIT, 40 MB here) fails
 * at once with the reason, rather than being tried again until the retries run out.
 */
import { createTestContext, type TestContext } from '../context.js';
import { load, loadFixture, type LoadFixture } from './helpers.js';

jest.setTimeout(120_000);

let ctx: TestContext;
let fixture: LoadFixture;
beforeAll(async () => {
  ctx = await createTestContext({ COLLAB_DUCKDB_MEMORY_LIMIT: '40MB' });
  await ctx.startWorker();
  fixture = await loadFixture(ctx);
});
afterAll(() => ctx.close());

it('fails a JSON file too wide for the memory limit on its first attempt, saying why', async () => {
  const columns = 500;
  const table = await fixture.table(Array.from({ length: columns }, (_, i) => ({ name: `c${i}`, type: 'INT64' })));
  const row = JSON.stringify(Object.fromEntries(Array.from({ length: columns }, (_, i) => [`c${i}`, i])));
  const job = await load(ctx, fixture.token, table, { fileName: 'wide.json', content: `${row}\n` });
  expect(job.status).toBe('Failed');
  expect(job.error_details.message).toMatch(
    /^DuckDB ran out of memory for this file \(.+\): raise COLLAB_DUCKDB_MEMORY_LIMIT, or load fewer columns or rows at a time; nothing was loaded$/,
  );
  // One attempt: the queue's record of the job shows no retry.
  expect(job.error_details.message).not.toMatch(/tried again/);
});
