import { randomUUID } from 'node:crypto';
import fs, { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { NotFoundError } from '@repo/errors';
import { checkPrefix, keySegments } from './keys.js';
import {
  ByteMeter,
  describeStored,
  type DownloadUrlOptions,
  type ObjectStorage,
  type OpenedObject,
  type StoredObject,
  type UploadUrlOptions,
} from './object-storage.js';

// Under the root, but unreachable by any key (no key segment starts with a dot).
const TEMP_DIR = '.tmp';

/**
 * Objects as files under one directory (the app passes `<DATA_DIR>/objects`), one file per key.
 * Every write goes to a temporary file that is flushed and then renamed into place, so a crash
 * leaves either the old object or the new one, never a part. Downloads are served by the app
 * through HMAC-signed URLs (`signed-url.ts`).
 */
export class LocalObjectStorage implements ObjectStorage {
  readonly backend = 'local';

  constructor(private readonly root: string) {}

  async put(key: string, body: Buffer, _options: { contentType: string }): Promise<StoredObject> {
    const target = this.pathOf(key);
    // The temporary folder is made only when missing: a mail's 10,000 attachments are as many puts.
    const temp = path.join(this.root, TEMP_DIR, randomUUID());
    try {
      await writeNewFile(temp, body).catch(async (error: unknown) => {
        if (!isErrno(error, 'ENOENT')) throw error;
        await mkdir(path.dirname(temp), { recursive: true });
        await writeNewFile(temp, body);
      });
      await moveIntoPlace(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return describeStored(body);
  }

  async putStream(key: string, body: Readable, options: { contentType: string; maxBytes?: number }): Promise<StoredObject> {
    const target = this.pathOf(key);
    const temp = await this.tempPath();
    const meter = new ByteMeter(options.maxBytes);
    try {
      // flush: the bytes are on disk before the rename makes them the object.
      await pipeline(body, meter, createWriteStream(temp, { flags: 'wx', flush: true }));
      await moveIntoPlace(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return meter.stored();
  }

  async get(key: string): Promise<Buffer> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      // EISDIR/ENOTDIR: the key names a folder, or passes through a file; either way no object.
      if (isErrno(error, 'ENOENT', 'EISDIR', 'ENOTDIR')) throw new NotFoundError('Object not found', { key });
      throw error;
    }
  }

  async open(key: string): Promise<OpenedObject> {
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (error) {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) throw new NotFoundError('Object not found', { key });
      throw error;
    }
    try {
      const stats = await handle.stat();
      // A folder opens as well; it is no object.
      if (!stats.isFile()) throw new NotFoundError('Object not found', { key });
      // Read through this descriptor: a put renames a new file into place and leaves this one whole.
      return { stream: handle.createReadStream(), size: stats.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await rm(this.pathOf(key));
    } catch (error) {
      if (!isErrno(error, 'ENOENT', 'ENOTDIR')) throw error;
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    const folder = path.join(this.root, ...checkPrefix(prefix).split('/'));
    if (!(await isDirectory(folder))) return 0;
    // Move the folder aside first: readers stop seeing its objects at once, and the count
    // below is of exactly what was removed even while others write under the prefix.
    const detached = await this.tempPath();
    try {
      await rename(folder, detached);
    } catch (error) {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) return 0;
      throw error;
    }
    const entries = await readdir(detached, { recursive: true, withFileTypes: true });
    await rm(detached, { recursive: true, force: true });
    return entries.filter((entry) => entry.isFile()).length;
  }

  presignedDownloadUrl(_key: string, _options: DownloadUrlOptions): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  presignedUploadUrl(_key: string, _options: UploadUrlOptions): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** Temporary files of writes (and folders of prefix deletions) that a crash cut short. */
  async sweepPartialWrites(olderThan: Date): Promise<number> {
    const dir = path.join(this.root, TEMP_DIR);
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return 0;
      throw error;
    }
    let removed = 0;
    for (const entry of entries) {
      const file = path.join(dir, entry);
      const stats = await lstat(file).catch(() => undefined);
      // A write still under way is younger than `olderThan`; one gone meanwhile needs nothing.
      if (!stats || stats.mtime >= olderThan) continue;
      await rm(file, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /**
   * Where the object's file is, for a reader that must have a file (a database engine loading it):
   * read it, never write it. Whether it exists is not checked.
   */
  filePath(key: string): string {
    return this.pathOf(key);
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...keySegments(key));
  }

  private async tempPath(): Promise<string> {
    const dir = path.join(this.root, TEMP_DIR);
    await mkdir(dir, { recursive: true });
    return path.join(dir, randomUUID());
  }
}

async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isDirectory();
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return false;
    throw error;
  }
}

// Duck-typed: errors of Node's own modules are not `instanceof Error` inside jest's sandbox.
function isErrno(error: unknown, ...codes: string[]): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}

const openFile = promisify(fs.open);
const writeFile = promisify(fs.write);
const datasyncFile = promisify(fs.fdatasync);
const closeFile = promisify(fs.close);

/**
 * Creates `file` with `body`, on disk when it resolves: its bytes and what reading them back needs
 * (size, blocks; fdatasync), not its times. On the callback API: FileHandles cost a third more CPU
 * for a mail's 10,000 small attachments (bench:ingest).
 */
async function writeNewFile(file: string, body: Buffer): Promise<void> {
  const fd = await openFile(file, 'wx');
  try {
    for (let written = 0; written < body.length;) {
      written += (await writeFile(fd, body, written, body.length - written)).bytesWritten;
    }
    await datasyncFile(fd);
  } finally {
    await closeFile(fd);
  }
}

/**
 * Renames a written file to its key's path, making the folder only when the rename finds it
 * missing (most writes go to a folder that exists). deletePrefix may remove the folder between the
 * mkdir and the rename, or during the mkdir (a write racing the removal of its prefix): the folder
 * is made again, a few times. A recursive mkdir that finds a folder, then loses it before it can
 * check it, reports ENOTDIR.
 */
async function moveIntoPlace(temp: string, target: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await rename(temp, target);
    } catch (error) {
      if (!isErrno(error, 'ENOENT', 'ENOTDIR') || attempt === 5) throw error;
    }
    try {
      await mkdir(path.dirname(target), { recursive: true });
    } catch (error) {
      if (!isErrno(error, 'ENOENT', 'ENOTDIR')) throw error;
    }
  }
}
