import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { NotFoundError } from '@repo/errors';
import { checkKey, checkPrefix } from './keys.js';
import {
  ByteMeter,
  describeStored,
  type DownloadUrlOptions,
  type ObjectStorage,
  type OpenedObject,
  type StoredObject,
  type UploadUrlOptions,
} from './object-storage.js';

/**
 * What the database backend needs of a Postgres client: `query` with `$1`-style parameters,
 * answering the result rows. A `pg` Pool is one; an app on another client passes an adapter.
 */
export interface SqlClient {
  query(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Objects as rows of a table `stored_objects` in the app's own Postgres, which the app's
 * migrations create:
 *
 * ```sql
 * CREATE TABLE stored_objects (
 *   key text PRIMARY KEY, content bytea NOT NULL, content_type text NOT NULL,
 *   size integer NOT NULL, sha256 text NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT now());
 * CREATE INDEX ON stored_objects USING spgist (key text_ops);  -- deletePrefix's `^@`
 * ```
 *
 * Each write is one statement, so readers see the old object or the new one. For deployments
 * without a bucket or a shared disk; objects count against the database's size and backups.
 * Downloads are served by the app through HMAC-signed URLs (`signed-url.ts`).
 */
export class DatabaseObjectStorage implements ObjectStorage {
  readonly backend = 'database';

  constructor(private readonly sql: SqlClient) {}

  async put(key: string, body: Buffer, options: { contentType: string }): Promise<StoredObject> {
    const stored = await describeStored(body);
    await this.sql.query(
      `INSERT INTO stored_objects (key, content, content_type, size, sha256) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key) DO UPDATE
         SET content = excluded.content, content_type = excluded.content_type, size = excluded.size,
             sha256 = excluded.sha256, created_at = now()`,
      [checkKey(key), body, options.contentType, stored.size, stored.sha256],
    );
    return stored;
  }

  /** A row takes the whole value, so the bytes are gathered (up to `maxBytes`) and then written. */
  async putStream(key: string, body: Readable, options: { contentType: string; maxBytes?: number }): Promise<StoredObject> {
    const chunks: Buffer[] = [];
    await pipeline(body, new ByteMeter(options.maxBytes), async (counted: AsyncIterable<Buffer>) => {
      for await (const chunk of counted) chunks.push(chunk);
    });
    return this.put(key, Buffer.concat(chunks), options);
  }

  async get(key: string): Promise<Buffer> {
    const { rows } = await this.sql.query('SELECT content FROM stored_objects WHERE key = $1', [checkKey(key)]);
    const content = rows[0]?.content;
    // isView rather than instanceof: the bytes may come from another realm (a jest sandbox).
    if (!ArrayBuffer.isView(content)) throw new NotFoundError('Object not found', { key });
    // Clients answer bytea as a Buffer (pg) or a Uint8Array (Prisma): viewed, not copied.
    return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  }

  /** The row is read whole (a bytea value arrives in one piece), then streamed. */
  async open(key: string): Promise<OpenedObject> {
    const content = await this.get(key);
    return { stream: Readable.from(content, { objectMode: false }), size: content.length };
  }

  async delete(key: string): Promise<void> {
    await this.sql.query('DELETE FROM stored_objects WHERE key = $1', [checkKey(key)]);
  }

  async deletePrefix(prefix: string): Promise<number> {
    const { rows } = await this.sql.query(
      `WITH removed AS (DELETE FROM stored_objects WHERE key ^@ $1 RETURNING 1) SELECT count(*)::int AS count FROM removed`,
      [`${checkPrefix(prefix)}/`],
    );
    return Number(rows[0]?.count ?? 0);
  }

  presignedDownloadUrl(_key: string, _options: DownloadUrlOptions): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  presignedUploadUrl(_key: string, _options: UploadUrlOptions): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  // A row is written by one statement: no partial write can remain.
  sweepPartialWrites(): Promise<number> {
    return Promise.resolve(0);
  }
}
