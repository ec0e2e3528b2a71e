/**
 * The job queue on a real Postgres (a scratch database of the machine's server): handlers get
 * their validated payload, policy `short` keeps one waiting job per key, a delayed job waits, and
 * a job out of retries reaches `gaveUp` with its failure. (Queuing in an app's Prisma transaction
 * is tested by the apps: collab-api's load jobs and inbox-api's summaries.)
 */
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { z } from 'zod';
import { createJobQueue, defineJob, type JobQueue } from '../src/index.js';

interface TestDeps {
  handled: { job: string; payload: unknown }[];
  gaveUp: { payload: unknown; reason: string }[];
}

const catalog = {
  echo: defineJob({
    payload: z.object({ n: z.number().int() }),
    retryLimit: 0,
    retryDelaySeconds: 1,
    expireInSeconds: 60,
    handle: (deps: TestDeps, payload) => {
      deps.handled.push({ job: 'echo', payload });
      return Promise.resolve();
    },
  }),
  latest: defineJob({
    payload: z.object({ key: z.string() }),
    policy: 'short',
    retryLimit: 0,
    retryDelaySeconds: 1,
    expireInSeconds: 60,
    handle: (deps: TestDeps, payload) => {
      deps.handled.push({ job: 'latest', payload });
      return Promise.resolve();
    },
  }),
  failing: defineJob({
    payload: z.object({ id: z.string() }),
    retryLimit: 1,
    retryDelaySeconds: 1,
    expireInSeconds: 60,
    handle: () => Promise.reject(new Error('the warehouse said no')),
    gaveUp: (deps: TestDeps, payload, reason) => {
      deps.gaveUp.push({ payload, reason });
      return Promise.resolve();
    },
  }),
};

const silent = { error: () => undefined, warn: () => undefined };

let database: ScratchDatabase;
let queue: JobQueue<TestDeps, typeof catalog>;
const deps: TestDeps = { handled: [], gaveUp: [] };

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the worker');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'jobs_queue' });
  queue = createJobQueue<TestDeps, typeof catalog>(catalog, {
    databaseUrl: database.url,
    embedded: false,
    applicationName: 'jobs test',
    logger: silent,
    pollSeconds: 1,
    heartbeatSeconds: 10,
    supervise: true,
  });
}, 60_000);
afterAll(async () => {
  await queue.stop(0);
  await database.drop();
});

it('refuses a payload that does not match its schema before queuing it', async () => {
  await expect(queue.send('echo', { n: 1.5 })).rejects.toThrow(z.ZodError);
});

it('keeps one waiting job per key under policy short, and runs a delayed job only after its delay', async () => {
  expect(await queue.send('latest', { key: 'thread-1' }, { key: 'thread-1', delaySeconds: 2 })).toBe(true);
  expect(await queue.send('latest', { key: 'thread-1' }, { key: 'thread-1', delaySeconds: 2 })).toBe(false);
  expect(await queue.send('latest', { key: 'thread-2' }, { key: 'thread-2', delaySeconds: 2 })).toBe(true);
  expect(await queue.send('echo', { n: 1 })).toBe(true);
  expect(await queue.send('echo', { n: 1 })).toBe(true);

  const started = Date.now();
  await queue.work(deps);
  await until(() => deps.handled.filter((entry) => entry.job === 'latest').length === 2);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  await until(() => deps.handled.filter((entry) => entry.job === 'echo').length === 2);
  expect(deps.handled.filter((entry) => entry.job === 'latest').map((entry) => entry.payload)).toEqual(
    expect.arrayContaining([{ key: 'thread-1' }, { key: 'thread-2' }]),
  );
});

it('hands a job out of retries to gaveUp with the last failure', async () => {
  await queue.send('failing', { id: 'job-1' });
  queue.wake('failing');
  await until(() => deps.gaveUp.length === 1, 30_000);
  expect(deps.gaveUp).toEqual([{ payload: { id: 'job-1' }, reason: 'the warehouse said no' }]);
}, 40_000);
