import type pg from 'pg';
import { createPool } from '@repo/db';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { DatabaseObjectStorage } from '../src/index.js';
import { describeObjectStorageContract } from './contract.js';

// The table as an app's migration creates it (see database.ts; inbox-api's schema.prisma).
const STORED_OBJECTS = `
  CREATE TABLE stored_objects (
    key text PRIMARY KEY, content bytea NOT NULL, content_type text NOT NULL, size integer NOT NULL,
    sha256 text NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP);
  CREATE INDEX stored_objects_key_idx ON stored_objects USING spgist (key text_ops);`;

let database: ScratchDatabase;
let pool: pg.Pool;
let storage: DatabaseObjectStorage;

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'storage_database' });
  pool = createPool(database.url, 4);
  await pool.query(STORED_OBJECTS);
  storage = new DatabaseObjectStorage(pool);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

describeObjectStorageContract('DatabaseObjectStorage', async () => {
  await pool.query('TRUNCATE stored_objects');
  return storage;
});

describe('DatabaseObjectStorage', () => {
  beforeEach(() => pool.query('TRUNCATE stored_objects'));

  it('keeps one row per key with the content type, size and SHA-256', async () => {
    const stored = await storage.put('inboxes/i1/attachments/a1', Buffer.from('hello'), { contentType: 'text/plain' });
    await storage.put('inboxes/i1/attachments/a1', Buffer.from('hello again'), { contentType: 'text/markdown' });

    const { rows } = await pool.query('SELECT key, content, content_type, size, sha256 FROM stored_objects');
    expect(rows).toEqual([
      {
        key: 'inboxes/i1/attachments/a1',
        content: Buffer.from('hello again'),
        content_type: 'text/markdown',
        size: 11,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(stored.sha256).not.toBe(rows[0].sha256);
    expect(storage.backend).toBe('database');
  });

  it('finds a folder’s objects through the index on keys', async () => {
    const client = await pool.connect();
    try {
      // The table is small: without this the planner would rather scan it.
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query('EXPLAIN (FORMAT JSON) DELETE FROM stored_objects WHERE key ^@ $1', ['inboxes/x/']);
      expect(JSON.stringify(rows)).toContain('stored_objects_key_idx');
    } finally {
      client.release(true);
    }
  });

  it('has nothing to sweep: a row is written by one statement', async () => {
    await expect(storage.sweepPartialWrites()).resolves.toBe(0);
  });
});
