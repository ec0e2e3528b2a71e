import { createHash, type Hash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { PayloadTooLargeError } from '@repo/errors';

/** The backends, as `STORAGE_BACKEND` names them and attachment records remember them. */
export const STORAGE_BACKENDS = ['local', 'gcs', 'database'] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

/** What `put` learned about the bytes it stored. */
export interface StoredObject {
  size: number;
  /** SHA-256 of the content, lower-case hex. */
  sha256: string;
}

/**
 * Bytes hashed in one turn of the event loop: 0.8 ms with SHA instructions, 3 to 4 ms without.
 * A larger body is hashed a part per turn. WebCrypto's digest, which hashes on libuv's thread pool,
 * first copies its input on the event loop: 20 ms for a 28.7 MB attachment, more than hashing the
 * whole of it here (measured in docs/benchmarks.md of inbox-api, "Mail of 20 MB").
 */
const HASH_BYTES_PER_TURN = 1024 * 1024;

export async function describeStored(body: Buffer): Promise<StoredObject> {
  const hash = createHash('sha256');
  await hashInTurns(hash, body);
  return { size: body.length, sha256: hash.digest('hex') };
}

/** Adds `bytes` to `hash` a part (HASH_BYTES_PER_TURN) per turn of the event loop. */
export async function hashInTurns(hash: Hash, bytes: Buffer): Promise<void> {
  for (let start = 0; start < bytes.length; start += HASH_BYTES_PER_TURN) {
    if (start > 0) await setImmediate();
    hash.update(bytes.subarray(start, start + HASH_BYTES_PER_TURN));
  }
}

/**
 * Passes bytes through while hashing and counting them (for `putStream`); more than `maxBytes`
 * fails the stream with PayloadTooLargeError.
 */
export class ByteMeter extends Transform {
  private size = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      callback(new PayloadTooLargeError(`The upload is larger than ${this.maxBytes} bytes`, { max_bytes: this.maxBytes }));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** What passed through, once the stream has ended. */
  stored(): StoredObject {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }
}

/** An object opened for reading. */
export interface OpenedObject {
  /** The bytes; destroy it to stop reading early. */
  stream: Readable;
  /** How many bytes the stream yields. */
  size: number;
}

export interface DownloadUrlOptions {
  expiresInSeconds: number;
  /** Offered to the browser as the download's name (Content-Disposition). */
  filename: string;
  contentType: string;
}

export interface UploadUrlOptions {
  expiresInSeconds: number;
  /** The Content-Type the uploader must send (it is part of what is signed). */
  contentType: string;
}

/**
 * The one object store of the product (attachments, uploads, exports). Keys are
 * `/`-separated paths chosen by the app, e.g. `inboxes/<id>/attachments/<id>`; see `keys.ts`
 * for what a key may contain.
 */
export interface ObjectStorage {
  /** Stored in attachment records (`storage_backend`). */
  readonly backend: StorageBackend;
  /** Stores the whole body under the key, replacing any object there. Readers never see half an object. */
  put(key: string, body: Buffer, options: { contentType: string }): Promise<StoredObject>;
  /**
   * Stores the bytes of `body` as they arrive, never holding them all in memory (except the
   * database backend, whose row takes the whole value). More than `maxBytes`: PayloadTooLargeError,
   * and nothing is stored. Readers never see half an object.
   */
  putStream(key: string, body: Readable, options: { contentType: string; maxBytes?: number }): Promise<StoredObject>;
  /** The object's bytes; NotFoundError when there is none. */
  get(key: string): Promise<Buffer>;
  /**
   * The object's bytes as a stream, for sending them on without holding them in memory (local
   * files and Cloud Storage are read as the stream is consumed; the database backend reads the row
   * first). The stream yields the version that was opened, never a mix: a `put` meanwhile leaves
   * it whole (Cloud Storage, whose replaced version is gone, fails the stream instead).
   * NotFoundError when there is none.
   */
  open(key: string): Promise<OpenedObject>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes every object under `prefix/` (a folder, never a partial name: `inboxes/ab` does not
   * touch `inboxes/abc/...`) and answers how many there were.
   */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * A URL that downloads the object straight from the store, for backends that can sign one (gcs).
   * Undefined for local and database storage, whose downloads the app serves and signs itself
   * (`signed-url.ts`).
   */
  presignedDownloadUrl(key: string, options: DownloadUrlOptions): Promise<string | undefined>;
  /**
   * A URL that stores a PUT's body under the key straight in the store, for backends that can
   * sign one (gcs). Undefined for local and database storage: the app takes such uploads itself,
   * through a link it signs (`signed-url.ts`) and `putStream`.
   */
  presignedUploadUrl(key: string, options: UploadUrlOptions): Promise<string | undefined>;
  /**
   * Removes what writes interrupted by a crash left behind (local storage's temporary files) when
   * older than `olderThan`, and answers how many. Writes to Cloud Storage are atomic: nothing to do.
   */
  sweepPartialWrites(olderThan: Date): Promise<number>;
}
