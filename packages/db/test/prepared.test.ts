import type pg from 'pg';
import { createScratchDatabase, type ScratchDatabase } from '../src/dev/index.js';
import { createPool, preparedQuery } from '../src/index.js';

let db: ScratchDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createScratchDatabase({ label: 'prepared_test' });
  // One connection, so that every query below sees the statements the others prepared.
  pool = createPool(db.url, 1);
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

const preparedTexts = async () =>
  (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement')).rows.map(
    (row) => row.statement,
  );

describe('preparedQuery', () => {
  it('prepares each text once per connection and binds each run its own values', async () => {
    const doubled = 'SELECT $1::int * 2 AS n';
    expect(await preparedQuery(pool, { text: doubled, values: [2] })).toEqual([{ n: 4 }]);
    expect(await preparedQuery(pool, { text: doubled, values: [5] })).toEqual([{ n: 10 }]);
    expect(await preparedTexts()).toEqual([doubled]);

    const tripled = 'SELECT $1::int * 3 AS n';
    expect(await preparedQuery(pool, { text: tripled, values: [5] })).toEqual([{ n: 15 }]);
    expect(await preparedTexts()).toEqual([doubled, tripled]);
  });

  it('runs on a client checked out of the pool, as inside a transaction', async () => {
    const client = await pool.connect();
    try {
      expect(await preparedQuery(client, { text: 'SELECT $1::text AS s', values: ['x'] })).toEqual([{ s: 'x' }]);
    } finally {
      client.release();
    }
  });
});
