/**
 * kill -9 in the middle of a query job, in a real server process: after the warehouse stored the
 * result (before the job was recorded DONE and charged), and after that transaction committed
 * (before pg-boss heard the job finished). A restart on the same database and data folder ends
 * the job DONE with its whole result, charged exactly once. The same for an export (database and
 * object storage): killed after the file was written, after it was stored, and after the export
 * was recorded DONE, it ends DONE with the whole file under its key, and no work file left. And a
 * cancel of a running query: killed after the query stopped (before the job was recorded
 * CANCELLED and charged), and after that transaction committed, it ends CANCELLED, never RUNNING,
 * charged at most once. And the expiry sweep: killed after it deleted a job's stored result and
 * its export's file (before the job was marked), the result answers 410 meanwhile and after, and a
 * restart's sweep marks the job, with nothing left in DuckDB or object storage.
 */
import { once } from 'node:events';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { mintLocalToken } from '../../src/auth/index.js';
import { createDatabaseClient, type Database } from '../../src/database.js';
import { migrationsDir } from '../../src/paths.js';
import { bootstrapTenant } from '../../src/tenants/bootstrap.js';
import { TEST_SECRET } from '../context.js';
import { client, start } from '../service-process.js';
import { openWarehouseCatalog } from '../warehouse-catalog.js';

jest.setTimeout(300_000);

const ROWS = 1000;
const CSV = `id,name\n${Array.from({ length: ROWS }, (_, i) => `${i},name ${i}`).join('\n')}\n`;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits until pg-boss recorded the job for `id` completed (a process killed after this retries nothing). */
function completed(db: Database, name: string, key: string, id: string): Promise<unknown> {
  return until(
    () => db.$queryRaw<{ state: string }[]>`
      SELECT state::text FROM pgboss.job WHERE name = ${name} AND data->>${key} = ${id}`,
    (rows) => rows.length === 1 && rows[0]!.state === 'completed',
    `the ${name} job in pg-boss`,
  );
}

describe('kill -9 during a query job, then a restart', () => {
  let database: ScratchDatabase;
  let dataDir: string;
  let db: Database;
  let token: string;
  let env: Record<string, string>;
  let query: { id: string; text: string };
  let heavy: { id: string; text: string };
  // One table of ROWS rows and one saved query for both cases, made by a process of their own.
  beforeAll(async () => {
    database = await createScratchDatabase({ label: 'collab_query_crash', migrationsDir });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-query-crash-'));
    db = createDatabaseClient(database.url, 2);
    await bootstrapTenant(db, { tenantName: 'Crash', adminEmail: 'admin@crash.test', adminName: 'Admin', adminSub: 'idp|crash' });
    token = mintLocalToken({ secret: TEST_SECRET, sub: 'idp|crash' });
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    const setup = await start(env);
    const api = client(setup.url, token);
    const { tableId, datasetName, projectId } = await api.table();
    const load = await api.upload(tableId, CSV);
    await until(
      async () => (await api.call('GET', `/load_job/${load.body.id}`)).body.status,
      (status) => status === 'Completed',
      'the load job',
    );
    const text = `SELECT count(*) AS n, sum(id) AS total FROM ${datasetName}.T`;
    const saved = await api.call('POST', '/api/v1/queries', { project_id: projectId, query_text: text });
    expect(saved.status).toBe(201);
    query = { id: saved.body.id, text };
    // Four hundred billion rows: it runs until it is cancelled.
    const heavyText = `SELECT count(*) AS n FROM ${datasetName}.T, (SELECT unnest(range(20000)) AS a) x, (SELECT unnest(range(20000)) AS b) y WHERE a + b >= 0`;
    const heavySaved = await api.call('POST', '/api/v1/queries', { project_id: projectId, query_text: heavyText });
    heavy = { id: heavySaved.body.id, text: heavyText };
    expect(await setup.stop()).toBe(0);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs the saved query on a server killed at `point`; answers the job's id once the process is gone. */
  async function runKilledAt(point: string): Promise<string> {
    const doomed = await start({ ...env, TEST_CRASH_POINT: point });
    const exited = once(doomed.child, 'exit');
    const run = await client(doomed.url, token).call('POST', '/api/v1/queries/run', {
      query_id: query.id,
      query_text: query.text,
    });
    expect(run.status).toBe(202);
    expect(((await exited) as [number | null, string | null])[1]).toBe('SIGKILL');
    return String(run.body.job_id);
  }

  /** Restarts the service, waits until the job has ended, hands `check` its API and the job, and stops it cleanly. */
  async function afterRestart(
    jobId: string,
    check: (api: ReturnType<typeof client>, job: Record<string, unknown>) => Promise<void>,
  ) {
    const restarted = await start(env);
    try {
      const api = client(restarted.url, token);
      const job = await until(
        async () => (await api.call('GET', `/api/v1/query-jobs/${jobId}`)).body,
        (body) => body.status !== 'PENDING' && body.status !== 'RUNNING',
        'the query job',
      );
      await check(api, job);
      expect(await restarted.stop()).toBe(0);
    } finally {
      if (restarted.child.exitCode === null) await restarted.stop();
    }
  }

  it.each(['query_job:result-stored', 'query_job:done'])(
    'at %s: the job ends DONE with its whole result, charged once',
    async (point) => {
      const jobId = await runKilledAt(point);
      await afterRestart(jobId, async (api, job) => {
        expect(job).toMatchObject({ status: 'DONE', total_rows: 1 });
        const results = (await api.call('GET', `/api/v1/query-jobs/${jobId}/results`)).body;
        expect(results).toMatchObject({ total_rows: 1, rows: [{ data: { n: ROWS, total: (ROWS * (ROWS - 1)) / 2 } }] });
        expect(await db.queryCost.count({ where: { queryJobId: jobId } })).toBe(1);
      });
    },
  );

  it('at query_job:result-stored, then cancelled while down: the restart ends it CANCELLED and keeps none of its rows', async () => {
    const jobId = await runKilledAt('query_job:result-stored');
    const stored = `collab_results.r_${jobId.replaceAll('-', '_')}`;
    const storedRows = async () => {
      const catalog = await openWarehouseCatalog(dataDir);
      try {
        return await catalog.run(`SELECT count(*) FROM ${stored}`).then(
          () => true,
          () => false,
        );
      } finally {
        catalog.close();
      }
    };
    expect(await storedRows()).toBe(true);
    // What POST .../cancel writes for a RUNNING job, while no process runs it.
    await db.queryJob.update({ where: { id: jobId }, data: { cancelRequestedAt: new Date() } });
    await afterRestart(jobId, (_api, job) => {
      expect(job).toMatchObject({ status: 'CANCELLED', results_expire_at: null });
      return Promise.resolve();
    });
    // No result: nothing would ever sweep rows left behind (the sweep follows results_expire_at).
    expect(await storedRows()).toBe(false);
    expect(await db.queryCost.count({ where: { queryJobId: jobId } })).toBe(0);
  });

  it.each([
    ['query_job:stopped', 0],
    ['query_job:stopped-recorded', 1],
  ])('at %s, cancelling a running query: the job ends CANCELLED, with %i charge', async (point, charges) => {
    const doomed = await start({ ...env, TEST_CRASH_POINT: String(point) });
    const exited = once(doomed.child, 'exit');
    const doomedApi = client(doomed.url, token);
    const run = await doomedApi.call('POST', '/api/v1/queries/run', { query_id: heavy.id, query_text: heavy.text });
    const jobId = String(run.body.job_id);
    await until(
      async () => (await doomedApi.call('GET', `/api/v1/query-jobs/${jobId}`)).body.status,
      (status) => status === 'RUNNING',
      'the running job',
    );
    // RUNNING comes before the query's check, byte count and connection, which take seconds on a loaded machine;
    // a cancel in that time ends it unstarted and uncharged. This case is about a query that ran.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await doomedApi.call('POST', `/api/v1/query-jobs/${jobId}/cancel`)).status).toBe(202);
    expect(((await exited) as [number | null, string | null])[1]).toBe('SIGKILL');

    const restarted = await start(env);
    try {
      const job = await until(
        async () => (await client(restarted.url, token).call('GET', `/api/v1/query-jobs/${jobId}`)).body,
        (body) => body.status !== 'PENDING' && body.status !== 'RUNNING',
        'the cancelled job',
      );
      expect(job).toMatchObject({ status: 'CANCELLED', error_result: { reason: 'stopped' } });
      // Killed before the charge was recorded, the retry cannot know what was read: nothing is charged, never twice.
      expect(await db.queryCost.count({ where: { queryJobId: jobId } })).toBe(charges);
      expect(await restarted.stop()).toBe(0);
    } finally {
      if (restarted.child.exitCode === null) await restarted.stop();
    }
  });

  it.each(['query_export:written', 'query_export:stored', 'query_export:done'])(
    'at %s: the export ends DONE with the whole file, and no work file is left',
    async (point) => {
      // The query job runs in the doomed process too (its crash point is in the export): one start fewer.
      const doomed = await start({ ...env, TEST_CRASH_POINT: point });
      const exited = once(doomed.child, 'exit');
      const doomedApi = client(doomed.url, token);
      const run = await doomedApi.call('POST', '/api/v1/queries/run', { query_id: query.id, query_text: query.text });
      const jobId = String(run.body.job_id);
      await until(
        async () => (await doomedApi.call('GET', `/api/v1/query-jobs/${jobId}`)).body.status,
        (status) => status === 'DONE',
        'the query job',
      );
      await completed(db, 'query-job', 'query_job_id', jobId);
      const created = await doomedApi.call('POST', `/api/v1/query-jobs/${jobId}/exports`, {
        format: 'CSV',
        compression: 'NONE',
      });
      expect(created.status).toBe(202);
      expect(((await exited) as [number | null, string | null])[1]).toBe('SIGKILL');

      const restarted = await start(env);
      try {
        const restartedApi = client(restarted.url, token);
        const exported = await until(
          async () => (await restartedApi.call('GET', `/api/v1/exports/${created.body.id}`)).body,
          (body) => body.status !== 'PENDING' && body.status !== 'RUNNING',
          'the export',
        );
        expect(exported.status).toBe('DONE');
        const link = (await restartedApi.call('GET', `/api/v1/exports/${created.body.id}/download-url`)).body;
        // The link names PUBLIC_BASE_URL, which a process on port 0 does not know: its path, on this process.
        const signed = new URL(String(link.url));
        const file = await fetch(`${restarted.url}${signed.pathname}${signed.search}`);
        expect(file.status).toBe(200);
        expect(await file.text()).toBe(`n,total\n${ROWS},${(ROWS * (ROWS - 1)) / 2}\n`);
        // Killed after DONE, the attempt is retried once pg-boss finds it dead: that retry clears the folder.
        await completed(db, 'query-export', 'export_id', created.body.id);
        expect(await readdir(path.join(dataDir, 'tmp')).catch(() => [])).toEqual([]);
        expect(await restarted.stop()).toBe(0);
      } finally {
        if (restarted.child.exitCode === null) await restarted.stop();
      }
    },
  );

  it('at result_expiry:deleted: the result answers 410, and a restart marks the job with nothing left behind', async () => {
    // The sweep runs every second; the result expires once the job and its export are done (in the doomed
    // process too: one start fewer) and settled in pg-boss, so that nothing is retried after the kill.
    const doomed = await start({ ...env, TEST_CRASH_POINT: 'result_expiry:deleted', COLLAB_RESULT_SWEEP_INTERVAL_SECONDS: '1' });
    const exited = once(doomed.child, 'exit');
    const doomedApi = client(doomed.url, token);
    const run = await doomedApi.call('POST', '/api/v1/queries/run', { query_id: query.id, query_text: query.text });
    const jobId = String(run.body.job_id);
    await until(
      async () => (await doomedApi.call('GET', `/api/v1/query-jobs/${jobId}`)).body.status,
      (status) => status === 'DONE',
      'the query job',
    );
    const created = await doomedApi.call('POST', `/api/v1/query-jobs/${jobId}/exports`, { format: 'CSV', compression: 'NONE' });
    const exported = await until(
      async () => (await doomedApi.call('GET', `/api/v1/exports/${created.body.id}`)).body,
      (body) => body.status === 'DONE',
      'the export',
    );
    const file = path.join(dataDir, 'objects', String(exported.storage_path));
    expect((await stat(file)).isFile()).toBe(true);
    await completed(db, 'query-job', 'query_job_id', jobId);
    await completed(db, 'query-export', 'export_id', created.body.id);

    await db.queryJob.update({ where: { id: jobId }, data: { resultsExpireAt: new Date(Date.now() - 3_600_000) } });
    expect(((await exited) as [number | null, string | null])[1]).toBe('SIGKILL');
    // Deleted, not yet marked.
    expect((await db.queryJob.findUniqueOrThrow({ where: { id: jobId } })).resultsDeletedAt).toBeNull();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    const catalog = await openWarehouseCatalog(dataDir);
    try {
      await expect(catalog.run(`SELECT 1 FROM collab_results.r_${jobId.replaceAll('-', '_')}`)).rejects.toThrow(/does not exist/);
    } finally {
      catalog.close();
    }

    const restarted = await start(env);
    try {
      const restartedApi = client(restarted.url, token);
      for (const urlPath of [`/api/v1/query-jobs/${jobId}/results`, `/api/v1/exports/${created.body.id}/download-url`]) {
        expect((await restartedApi.call('GET', urlPath)).status).toBe(410);
      }
      const marked = await until(
        () => db.queryJob.findUniqueOrThrow({ where: { id: jobId } }),
        (job) => job.resultsDeletedAt !== null,
        'the sweep after the restart',
      );
      expect(marked.status).toBe('DONE');
      expect((await restartedApi.call('GET', `/api/v1/exports/${created.body.id}`)).body).toMatchObject({
        status: 'DONE',
        storage_path: null,
      });
      expect((await restartedApi.call('GET', `/api/v1/query-jobs/${jobId}/results`)).status).toBe(410);
      expect(await restarted.stop()).toBe(0);
    } finally {
      if (restarted.child.exitCode === null) await restarted.stop();
    }
  });
});
