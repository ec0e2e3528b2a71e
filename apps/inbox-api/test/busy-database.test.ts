/**
 * A burst beyond the database pool: Prisma's interactive transaction that cannot get a connection
 * within its maxWait throws P2028. The error handler answers it 503 with Retry-After (the request
 * may be tried again), not 500. This checks the error Prisma really throws, on a real database.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { toAppError } from '@repo/errors';
import { createDatabaseClient, type Database } from '../src/database.js';
import { migrationsDir } from '../src/paths.js';

let database: ScratchDatabase;
let db: Database;

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'inbox_busy', migrationsDir });
  // One connection, so that one transaction holding it leaves the next without.
  db = createDatabaseClient(database.url, 1);
});

afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});

it('turns a transaction that waited past maxWait for a connection into 503 with Retry-After', async () => {
  let release: (() => void) | undefined;
  // Holds the one connection until released (its callback runs once the connection is its own).
  const held = db.$transaction(() => new Promise<void>((resolve) => (release = resolve)), { timeout: 30_000 });
  while (!release) await sleep(10);
  const error = await db
    .$transaction((tx) => tx.$queryRaw`SELECT 1`, { maxWait: 100 })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  release();
  await held;

  expect(error).toMatchObject({ name: 'PrismaClientKnownRequestError', code: 'P2028' });
  const answered = toAppError(error);
  expect(answered).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '1' } });
  // Once the connection is free again, the next transaction runs.
  await expect(db.$transaction((tx) => tx.$queryRaw`SELECT 1 AS one`)).resolves.toEqual([{ one: 1 }]);
});
