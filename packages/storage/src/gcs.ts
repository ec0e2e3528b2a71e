import { ApiError, type Bucket, type File, Storage } from '@google-cloud/storage';
import { GoogleAuth } from 'google-auth-library';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, NotFoundError, UpstreamError } from '@repo/errors';
import { attachmentDisposition } from './content-disposition.js';
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

/** A service-account key file's fields that matter here. */
export interface ServiceAccountCredentials {
  client_email: string;
  private_key: string;
  [field: string]: unknown;
}

export interface GcsOptions {
  bucket: string;
  /** Another JSON API endpoint (Private Service Connect, an emulator, a test server). */
  apiEndpoint?: string;
  /** A service-account key; without one, Application Default Credentials are used. */
  credentials?: ServiceAccountCredentials;
  /** Per HTTP request. */
  timeoutMs?: number;
}

// Objects, and signBlob for signing URLs under Application Default Credentials.
const SCOPES = ['https://www.googleapis.com/auth/devstorage.read_write', 'https://www.googleapis.com/auth/iam'];

const DELETE_CONCURRENCY = 10;

/**
 * Google Cloud Storage through `@google-cloud/storage`. Downloads go straight to the bucket
 * through V4 signed URLs, signed locally with the service-account key (or, under Application
 * Default Credentials, by the IAM signBlob API).
 */
export class GcsObjectStorage implements ObjectStorage {
  readonly backend = 'gcs';
  private readonly bucket: Bucket;

  constructor(options: GcsOptions) {
    const auth = new GoogleAuth({ credentials: options.credentials, scopes: SCOPES });
    // With a key, each request carries a JWT signed with it (Google's recommendation for
    // service-account keys, AIP-4111): no round trip to the OAuth token endpoint.
    auth.useJWTAccessWithScope = true;
    const storage = new Storage({
      authClient: auth,
      apiEndpoint: options.apiEndpoint,
      // The library leaves requests to another endpoint unauthenticated unless told otherwise;
      // Private Service Connect endpoints need credentials, and emulators ignore them.
      useAuthWithCustomEndpoint: true,
      timeout: options.timeoutMs ?? 60_000,
    });
    this.bucket = storage.bucket(options.bucket);
  }

  async put(key: string, body: Buffer, options: { contentType: string }): Promise<StoredObject> {
    const file = this.file(key);
    // One multipart request for the bytes and their metadata; the library checks the MD5 the
    // bucket reports against the bytes sent and fails on a mismatch.
    await this.call(() => file.save(body, { resumable: false, validation: 'md5', contentType: options.contentType }));
    return describeStored(body);
  }

  async putStream(key: string, body: Readable, options: { contentType: string; maxBytes?: number }): Promise<StoredObject> {
    const file = this.file(key);
    const meter = new ByteMeter(options.maxBytes);
    try {
      // One request; an upload cut short (too large, or the source failed) creates no object.
      await pipeline(
        body,
        meter,
        file.createWriteStream({ resumable: false, validation: 'md5', contentType: options.contentType }),
      );
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UpstreamError(`Cloud Storage failed: ${reasonOf(error)}`, { cause: error });
    }
    return meter.stored();
  }

  async get(key: string): Promise<Buffer> {
    const file = this.file(key);
    const [content] = await this.call(() => file.download(), key);
    return content;
  }

  async open(key: string): Promise<OpenedObject> {
    const file = this.file(key);
    const [metadata] = await this.call(() => file.getMetadata(), key);
    // The download names the generation whose size was read: a replacement written meanwhile is a
    // new generation, and is not what this stream yields. The library checks the bytes against
    // the object's hash as they arrive, and fails the stream on a mismatch.
    const version = this.bucket.file(file.name, { generation: metadata.generation });
    return { stream: version.createReadStream(), size: Number(metadata.size) };
  }

  async delete(key: string): Promise<void> {
    const file = this.file(key);
    await this.call(() => file.delete({ ignoreNotFound: true }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    const folder = `${checkPrefix(prefix)}/`;
    const [files] = await this.call(() => this.bucket.getFiles({ prefix: folder, autoPaginate: true }));
    // The JSON API deletes one object a request; a few at a time keeps a large folder quick.
    for (let start = 0; start < files.length; start += DELETE_CONCURRENCY) {
      const batch = files.slice(start, start + DELETE_CONCURRENCY);
      await Promise.all(batch.map((file) => this.call(() => file.delete({ ignoreNotFound: true }))));
    }
    return files.length;
  }

  async presignedDownloadUrl(key: string, options: DownloadUrlOptions): Promise<string> {
    const file = this.file(key);
    const [url] = await this.call(() =>
      file.getSignedUrl({
        version: 'v4',
        action: 'read',
        expires: Date.now() + options.expiresInSeconds * 1000,
        responseDisposition: attachmentDisposition(options.filename),
        responseType: options.contentType,
      }),
    );
    return url;
  }

  async presignedUploadUrl(key: string, options: UploadUrlOptions): Promise<string> {
    const file = this.file(key);
    const [url] = await this.call(() =>
      file.getSignedUrl({
        version: 'v4',
        action: 'write',
        expires: Date.now() + options.expiresInSeconds * 1000,
        contentType: options.contentType,
      }),
    );
    return url;
  }

  // A Cloud Storage upload either creates the object or does not: no partial write to remove.
  sweepPartialWrites(): Promise<number> {
    return Promise.resolve(0);
  }

  private file(key: string): File {
    return this.bucket.file(checkKey(key));
  }

  /** Runs one library call, answering a missing object with NotFoundError and other failures with UpstreamError. */
  private async call<T>(operation: () => Promise<T>, key?: string): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (key !== undefined && error instanceof ApiError && error.code === 404) {
        throw new NotFoundError('Object not found', { key });
      }
      const status = error instanceof ApiError && typeof error.code === 'number' ? `${error.code} ` : '';
      throw new UpstreamError(`Cloud Storage failed: ${status}${reasonOf(error)}`, { cause: error });
    }
  }
}

/** Google's message; downloads report the JSON error body as the message, so it is unwrapped. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  try {
    return (JSON.parse(message) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    return message;
  }
}
