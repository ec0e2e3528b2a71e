/**
 * The job queue on a real Postgres (a scratch database of the machine's server): handlers get
 * their validated payload, policy `short` keeps one waiting job per key, a delayed job waits, and
 * a job out of retries reaches `gaveUp` with its failure. Jobs run as many at a time as their
 * concurrency allows, never more of one group than its limit, higher priorities first. (Queuing in
 * an app's Prisma transaction is tested by the apps: collab-api's load jobs and inbox-api's summaries.)
 */
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { z } from 'zod';
import { createJobQueue, defineJob, type JobQueue } from '../src/index.js';

interface TestDeps {
  handled: { job: string; payload: unknown }[];
  gaveUp: { payload: unknown; reason: string }[];
  /** `grouped` jobs started, in order; each runs until its gate is opened. */
  started: string[];
  gates: Map<string, () => void>;
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
  grouped: defineJob({
    payload: z.object({ id: z.string() }),
    retryLimit: 0,
    retryDelaySeconds: 1,
    expireInSeconds: 60,
    concurrency: () => ({ perProcess: 2, perGroup: 1 }),
    handle: async (deps: TestDeps, payload) => {
      deps.started.push(payload.id);
      await new Promise<void>((resolve) => deps.gates.set(payload.id, resolve));
    },
  }),
};

const silent = { error: () => undefined, warn: () => undefined };

let database: ScratchDatabase;
let queue: JobQueue<TestDeps, typeof catalog>;
const deps: TestDeps = { handled: [], gaveUp: [], started: [], gates: new Map() };

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

it('runs jobs side by side up to the per-process limit, one of a group at a time, higher priority first', async () => {
  const open = async (id: string) => {
    await until(() => deps.gates.has(id));
    deps.gates.get(id)!();
  };
  await queue.send('grouped', { id: 'a1' }, { group: 'A' });
  await queue.send('grouped', { id: 'a2' }, { group: 'A' });
  await queue.send('grouped', { id: 'b1' }, { group: 'B' });
  queue.wake('grouped', 3);
  await until(() => deps.started.includes('b1') && (deps.started.includes('a1') || deps.started.includes('a2')));
  // Which of group A's jobs runs first is not promised: two workers may fetch both at once, and
  // the one whose fetch is counted first runs while the other is put back.
  const [firstA, secondA] = deps.started.includes('a1') ? ['a1', 'a2'] : ['a2', 'a1'];
  expect(deps.started).not.toContain(secondA);
  // b1's slot goes to b2, queued after both of A's: A has a job running.
  await open('b1');
  await queue.send('grouped', { id: 'b2' }, { group: 'B' });
  queue.wake('grouped');
  await until(() => deps.started.includes('b2'));
  expect(deps.started).not.toContain(secondA);
  // Both slots busy (A's first, b2): of the jobs queued meanwhile, the higher priority takes the next free slot.
  await queue.send('grouped', { id: 'low' }, { group: 'C' });
  await queue.send('grouped', { id: 'high' }, { group: 'D', priority: 5 });
  await open('b2');
  await until(() => deps.started.includes('high'));
  expect(deps.started).not.toContain('low');
  await open(firstA);
  await until(() => deps.started.includes(secondA) || deps.started.includes('low'));
  for (const id of ['high', secondA, 'low']) await open(id);
  await until(() => deps.started.length === 6);
  expect(deps.started.slice(0, 2).sort()).toEqual([firstA, 'b1'].sort());
  expect(deps.started.slice(2, 4)).toEqual(['b2', 'high']);
}, 60_000);

it('starts a job another process queued at once, woken by NOTIFY rather than by its poll', async () => {
  const handled: number[] = [];
  const notified = {
    notified: defineJob({
      payload: z.object({ n: z.number().int() }),
      retryLimit: 0,
      retryDelaySeconds: 1,
      expireInSeconds: 60,
      handle: (_deps: object, payload) => {
        handled.push(payload.n);
        return Promise.resolve();
      },
    }),
  };
  const options = { databaseUrl: database.url, embedded: false, logger: silent, heartbeatSeconds: 10 };
  // Two processes: one queues, the other works and polls only every ten minutes, so that only the NOTIFY
  // committed with the job can start it within the test's time.
  const sender = createJobQueue(notified, {
    ...options,
    applicationName: 'jobs test, sender',
    pollSeconds: 600,
    supervise: false,
  });
  const worker = createJobQueue(notified, {
    ...options,
    applicationName: 'jobs test, worker',
    pollSeconds: 600,
    supervise: false,
  });
  try {
    await sender.send('notified', { n: 0 });
    await worker.work({});
    // Its first poll, at start, takes the job queued before; then it waits for a wake-up.
    await until(() => handled.includes(0));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await sender.send('notified', { n: 1 });
    await until(() => handled.includes(1), 30_000);
  } finally {
    await Promise.all([sender.stop(0), worker.stop(0)]);
  }
}, 60_000);
