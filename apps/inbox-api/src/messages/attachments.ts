import { randomUUID } from 'node:crypto';
import { ServiceUnavailableError } from '@repo/errors';
import type { ObjectStorage } from '@repo/storage';
import { type Database, pgStatements, type Statements, textRows } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { attachmentPrefix } from '../inboxes/service.js';
import type { StoredAttachment } from './records.js';

export interface AttachmentFile {
  filename: string;
  contentType: string;
  content: Buffer;
  disposition?: string;
}

export interface AttachmentStore {
  db: Database;
  storage: ObjectStorage;
  /** How long a write may wait for its record before the reconciler takes it for abandoned. */
  leaseSeconds: number;
}

/** Attachments written at once by storeAttachments. */
const WRITES_AT_ONCE = 8;

/**
 * Writes attachment bytes under the inbox's prefix, so deleting the inbox removes them. Keys are
 * random, never derived from filenames. The keys are journaled in pending_objects before any
 * byte is written, and stay there until the record that refers to them commits (which calls
 * settlePendingObjects): whatever happens in between (a refused send, a crash), no object is left
 * that nothing refers to. If one write fails, those already written are removed.
 */
export async function storeAttachments(
  deps: AttachmentStore,
  inboxId: string,
  files: AttachmentFile[],
): Promise<StoredAttachment[]> {
  if (files.length === 0) return [];
  const keys = files.map(() => `${attachmentPrefix(inboxId)}attachments/${randomUUID()}`);
  // On pg directly (database.ts): Prisma's raw queries pass every key through its query compiler,
  // ~100 ms of the event loop for 10,000 attachments.
  await pgStatements(deps.db.pool).query(Prisma.sql`
    INSERT INTO pending_objects (storage_key, expires_at)
    SELECT key, now() + make_interval(secs => ${deps.leaseSeconds}) FROM ${textRows(keys)} AS keys(key)`);
  const store = async (index: number): Promise<StoredAttachment> => {
    const file = files[index]!;
    const storageKey = keys[index]!;
    const { size, sha256 } = await deps.storage.put(storageKey, file.content, { contentType: file.contentType });
    return {
      filename: file.filename,
      contentType: file.contentType,
      size,
      disposition: file.disposition ?? 'attachment',
      storageBackend: deps.storage.backend,
      storageKey,
      contentHash: `sha256:${sha256}`,
    };
  };
  const stored: StoredAttachment[] = new Array<StoredAttachment>(files.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  // A few writes at a time: each is flushed to disk (or a round trip to the bucket or database),
  // and a mail of 10,000 attachments took minutes one write after the other. On a failure, the
  // writes under way end before the objects are discarded, so that none is written after.
  const writer = async () => {
    while (!failure && next < files.length) {
      const index = next++;
      try {
        stored[index] = await store(index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITES_AT_ONCE, files.length) }, writer));
  if (failure) {
    await discardStoredObjects(deps, keys);
    throw failure.error;
  }
  return stored;
}

/** `expires_at` of journal rows the reconciler has taken: their objects are being removed. */
const TAKEN_FOR_REMOVAL = new Date(0);

/**
 * In the transaction that records the attachments: their objects are referred to now. Should the
 * reconciler have taken the journal rows meanwhile (the write outlived its lease), it is removing
 * the objects, and the record must not commit.
 */
export async function settlePendingObjects(statements: Statements, stored: StoredAttachment[]): Promise<void> {
  if (stored.length === 0) return;
  const [row] = await statements.query<{ settled: number }>(Prisma.sql`
    WITH settled AS (
      DELETE FROM pending_objects
       WHERE storage_key IN (SELECT ${textRows(stored.map((attachment) => attachment.storageKey))})
         AND expires_at > ${TAKEN_FOR_REMOVAL}::timestamptz
      RETURNING 1)
    SELECT count(*)::int AS settled FROM settled`);
  if (row?.settled !== stored.length) {
    throw new ServiceUnavailableError('Storing the attachments took too long; send the message again', {
      headers: { 'Retry-After': '1' },
    });
  }
}

/**
 * Removes the objects whose journal rows expired without a record ever settling them, and the
 * rows, a batch at a time. A batch is taken first, in a statement of its own that skips rows a
 * record's transaction holds: their `expires_at` becomes TAKEN_FOR_REMOVAL, and a record that
 * settles later finds them taken and does not commit. The objects are removed after that
 * statement, outside any transaction: the `database` storage backend needs a connection of its
 * own (the embedded database serves one transaction at a time). A crash midway leaves the taken
 * rows for the next round.
 */
export async function removeAbandonedObjects(deps: { db: Database; storage: ObjectStorage }): Promise<number> {
  let removed = 0;
  for (;;) {
    const rows = await deps.db.$queryRaw<{ storage_key: string }[]>`
      UPDATE pending_objects SET expires_at = ${TAKEN_FOR_REMOVAL}
       WHERE storage_key IN (SELECT storage_key FROM pending_objects WHERE expires_at < now()
                              ORDER BY expires_at LIMIT 20 FOR UPDATE SKIP LOCKED)
      RETURNING storage_key`;
    const keys = rows.map((row) => row.storage_key);
    for (const key of keys) await deps.storage.delete(key);
    await deps.db.pendingObject.deleteMany({ where: { storageKey: { in: keys } } });
    removed += keys.length;
    if (keys.length < 20) return removed;
  }
}

/**
 * Removes objects whose record was never committed, and their journal rows. Best effort: an
 * object that cannot be removed now keeps its row, and the reconciler removes it later.
 */
export async function discardStoredObjects(deps: { db: Database; storage: ObjectStorage }, keys: string[]): Promise<void> {
  const results = await Promise.allSettled(keys.map((key) => deps.storage.delete(key)));
  const removed = keys.filter((_, index) => results[index]!.status === 'fulfilled');
  await deps.db.pendingObject.deleteMany({ where: { storageKey: { in: removed } } }).catch(() => undefined);
}
