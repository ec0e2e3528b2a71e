import { createHash } from 'node:crypto';

/** What `put` learned about the bytes it stored. */
export interface StoredObject {
  size: number;
  /** SHA-256 of the content, lower-case hex. */
  sha256: string;
}

export function describeStored(body: Buffer): StoredObject {
  return { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
}

export interface DownloadUrlOptions {
  expiresInSeconds: number;
  /** Offered to the browser as the download's name (Content-Disposition). */
  filename: string;
  contentType: string;
}

/**
 * The one object store of the product (attachments, uploads, exports). Keys are
 * `/`-separated paths chosen by the app, e.g. `inboxes/<id>/attachments/<id>`; see `keys.ts`
 * for what a key may contain.
 */
export interface ObjectStorage {
  /** Stored in attachment records (`storage_backend`). */
  readonly backend: 'local' | 'gcs';
  /** Stores the whole body under the key, replacing any object there. Readers never see half an object. */
  put(key: string, body: Buffer, options: { contentType: string }): Promise<StoredObject>;
  /** The object's bytes; NotFoundError when there is none. */
  get(key: string): Promise<Buffer>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes every object under `prefix/` (a folder, never a partial name: `inboxes/ab` does not
   * touch `inboxes/abc/...`) and answers how many there were.
   */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * A URL that downloads the object straight from the store, for backends that can sign one (gcs).
   * Undefined for local storage, whose downloads the app serves and signs itself (`signed-url.ts`).
   */
  presignedDownloadUrl(key: string, options: DownloadUrlOptions): Promise<string | undefined>;
  /**
   * Removes what writes interrupted by a crash left behind (local storage's temporary files) when
   * older than `olderThan`, and answers how many. Writes to Cloud Storage are atomic: nothing to do.
   */
  sweepPartialWrites(olderThan: Date): Promise<number>;
}
