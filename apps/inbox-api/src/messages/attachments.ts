import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { NotFoundError, ServiceUnavailableError } from '@repo/errors';
import { describeStored, type ObjectStorage, type OpenedObject } from '@repo/storage';
import { type Database, pgStatements, type Statements, textRows } from '../database.js';
import { type Attachment, Prisma } from '../generated/prisma/client.js';
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
  /** In a mail of many, attachments of at most this many bytes are kept in their record (INBOX_INLINE_ATTACHMENT_BYTES); 0: none. */
  inlineMaxBytes: number;
}

/**
 * A mail of more than this many attachments keeps its small ones in their records. There, a file
 * write and flush each is what the mail costs (10,000 tiny attachments took 2 s of server CPU); a
 * mail of fewer keeps every attachment in the object store, where its backend's ways apply (a file
 * under DATA_DIR, a signed Cloud Storage link).
 */
export const MANY_ATTACHMENTS = 16;

/** Pure: whether an attachment of `size` bytes, in a mail of `count` attachments, is kept in its record. */
export function keptInRecord(size: number, count: number, inlineMaxBytes: number): boolean {
  return count > MANY_ATTACHMENTS && inlineMaxBytes > 0 && size <= inlineMaxBytes;
}

/** Attachments written at once by storeAttachments. */
const WRITES_AT_ONCE = 8;
/** Inline attachments hashed by storeAttachments between two turns of the event loop. */
const HASHES_AT_ONCE = 1000;

/**
 * Stores the attachments' bytes: in a mail of many, those of up to `inlineMaxBytes` each in their
 * record (keptInRecord; storage_backend `inline`, written with it in its transaction: no file, no
 * flush, nothing to orphan), the others in object storage under the inbox's prefix, so deleting
 * the inbox removes them. Keys are
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
  const stored: StoredAttachment[] = new Array<StoredAttachment>(files.length);
  const outside: number[] = [];
  for (const [index, file] of files.entries()) {
    // The event loop takes its turn between a thousand hashes: 10,000 held it 13 to 64 ms.
    if (index > 0 && index % HASHES_AT_ONCE === 0) await setImmediate();
    if (keptInRecord(file.content.length, files.length, deps.inlineMaxBytes)) stored[index] = await storedInline(file);
    else outside.push(index);
  }
  if (outside.length === 0) return stored;
  const keys = outside.map(() => `${attachmentPrefix(inboxId)}attachments/${randomUUID()}`);
  // On pg directly (database.ts): Prisma's raw queries pass every key through its query compiler,
  // ~100 ms of the event loop for 10,000 attachments.
  await pgStatements(deps.db.pool).query(Prisma.sql`
    INSERT INTO pending_objects (storage_key, expires_at)
    SELECT key, now() + make_interval(secs => ${deps.leaseSeconds}) FROM ${textRows(keys)} AS keys(key)`);
  const store = async (at: number): Promise<void> => {
    const file = files[outside[at]!]!;
    const storageKey = keys[at]!;
    const { size, sha256 } = await deps.storage.put(storageKey, file.content, { contentType: file.contentType });
    stored[outside[at]!] = {
      ...describeFile(file, size, sha256),
      storageBackend: deps.storage.backend,
      storageKey,
      content: null,
    };
  };
  let next = 0;
  let failure: { error: unknown } | undefined;
  // A few writes at a time: each is flushed to disk (or a round trip to the bucket or database),
  // and a mail of 10,000 attachments took minutes one write after the other. On a failure, the
  // writes under way end before the objects are discarded, so that none is written after.
  const writer = async () => {
    while (!failure && next < outside.length) {
      const at = next++;
      try {
        await store(at);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITES_AT_ONCE, outside.length) }, writer));
  if (failure) {
    await discardStoredObjects(deps, keys);
    throw failure.error;
  }
  return stored;
}

async function storedInline(file: AttachmentFile): Promise<StoredAttachment> {
  const { size, sha256 } = await describeStored(file.content);
  return { ...describeFile(file, size, sha256), storageBackend: INLINE, storageKey: null, content: file.content };
}

function describeFile(file: AttachmentFile, size: number, sha256: string) {
  return {
    filename: file.filename,
    contentType: file.contentType,
    size,
    disposition: file.disposition ?? 'attachment',
    contentHash: `sha256:${sha256}`,
  };
}

/** `storage_backend` of an attachment kept in its record. */
export const INLINE = 'inline';

/** The keys of the attachments held in object storage (inline ones have none). */
export function objectKeys(stored: readonly Pick<StoredAttachment, 'storageKey'>[]): string[] {
  return stored.flatMap((attachment) => (attachment.storageKey === null ? [] : [attachment.storageKey]));
}

/** An attachment's bytes, from its record or its object (missingContent when the object is gone). */
export async function readAttachment(storage: ObjectStorage, attachment: AttachmentPlace): Promise<Buffer> {
  const place = placeOf(attachment);
  return 'content' in place ? place.content : storage.get(place.key).catch(missingContent(attachment));
}

/** An attachment's bytes as a stream (download.ts), from its record or its object (missingContent when it is gone). */
export async function openAttachment(storage: ObjectStorage, attachment: AttachmentPlace): Promise<OpenedObject> {
  const place = placeOf(attachment);
  if (!('content' in place)) return storage.open(place.key).catch(missingContent(attachment));
  return { stream: Readable.from(place.content, { objectMode: false }), size: place.content.length };
}

/** An object gone from storage, reported by its attachment, never by its internal key. */
const missingContent =
  (attachment: AttachmentPlace) =>
  (error: unknown): never => {
    if (!(error instanceof NotFoundError)) throw error;
    throw new NotFoundError('The content of this attachment is missing from storage', { attachment_id: attachment.id });
  };

type AttachmentPlace = Pick<Attachment, 'id' | 'storageKey' | 'content'>;

function placeOf(attachment: AttachmentPlace): { content: Buffer } | { key: string } {
  const { content, storageKey } = attachment;
  // Viewed, not copied; isView rather than instanceof: the bytes may come from another realm (a jest sandbox).
  if (ArrayBuffer.isView(content)) return { content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) };
  if (storageKey !== null) return { key: storageKey };
  // storeAttachments gives every record one or the other.
  throw new Error('An attachment record has neither content nor a storage key');
}

/** `expires_at` of journal rows the reconciler has taken: their objects are being removed. */
const TAKEN_FOR_REMOVAL = new Date(0);

/**
 * In the transaction that records the attachments: their objects are referred to now. Should the
 * reconciler have taken the journal rows meanwhile (the write outlived its lease), it is removing
 * the objects, and the record must not commit.
 */
export async function settlePendingObjects(statements: Statements, stored: StoredAttachment[]): Promise<void> {
  const keys = objectKeys(stored);
  if (keys.length === 0) return;
  const [row] = await statements.query<{ settled: number }>(Prisma.sql`
    WITH settled AS (
      DELETE FROM pending_objects
       WHERE storage_key IN (SELECT ${textRows(keys)})
         AND expires_at > ${TAKEN_FOR_REMOVAL}::timestamptz
      RETURNING 1)
    SELECT count(*)::int AS settled FROM settled`);
  if (row?.settled !== keys.length) {
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
