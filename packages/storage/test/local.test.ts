import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BadRequestError, NotFoundError } from '@repo/errors';
import { LocalObjectStorage } from '../src/index.js';

let parent: string;
let root: string;
let storage: LocalObjectStorage;

beforeEach(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'storage-'));
  root = path.join(parent, 'objects');
  storage = new LocalObjectStorage(root);
});
afterEach(() => rm(parent, { recursive: true, force: true }));

describe('LocalObjectStorage', () => {
  it('stores bytes under the key and reads them back', async () => {
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const stored = await storage.put('inboxes/i1/attachments/a1', body, { contentType: 'application/octet-stream' });

    expect(stored).toEqual({ size: 256, sha256: createHash('sha256').update(body).digest('hex') });
    expect(await storage.get('inboxes/i1/attachments/a1')).toEqual(body);
    expect(await readFile(path.join(root, 'inboxes', 'i1', 'attachments', 'a1'))).toEqual(body);
    expect(storage.backend).toBe('local');
  });

  it('replaces an object and leaves no temporary file behind', async () => {
    await storage.put('k/a', Buffer.from('old'), { contentType: 'text/plain' });
    await storage.put('k/a', Buffer.from('new'), { contentType: 'text/plain' });

    expect((await storage.get('k/a')).toString()).toBe('new');
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
  });

  it('shows concurrent readers the old object or the new one, never a part', async () => {
    const old = Buffer.alloc(8 << 20, 'a');
    const replacement = Buffer.alloc(8 << 20, 'b');
    await storage.put('k/big', old, { contentType: 'application/octet-stream' });

    const write = storage.put('k/big', replacement, { contentType: 'application/octet-stream' });
    const reads = await Promise.all(Array.from({ length: 20 }, () => storage.get('k/big')));
    await write;

    for (const read of reads) expect(read.equals(old) || read.equals(replacement)).toBe(true);
  });

  it('removes the temporary file when a write cannot be put in place', async () => {
    await mkdir(path.join(root, 'k', 'folder', 'inside'), { recursive: true });

    await expect(storage.put('k/folder', Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow();
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
  });

  it('answers a missing object, or a folder, with NotFoundError', async () => {
    await storage.put('k/a/b', Buffer.from('x'), { contentType: 'text/plain' });

    await expect(storage.get('k/missing')).rejects.toThrow(NotFoundError);
    await expect(storage.get('k/a')).rejects.toThrow(NotFoundError);
    await expect(storage.get('k/a/b/c')).rejects.toThrow(NotFoundError);
  });

  it('deletes idempotently', async () => {
    await storage.put('k/a', Buffer.from('x'), { contentType: 'text/plain' });

    await storage.delete('k/a');
    await storage.delete('k/a');
    await storage.delete('never/written');
    await expect(storage.get('k/a')).rejects.toThrow(NotFoundError);
  });

  it('deletes a folder and counts its objects, leaving names that merely share its start', async () => {
    for (const key of ['inboxes/ab/1', 'inboxes/ab/2', 'inboxes/ab/x/3', 'inboxes/abc/1', 'inboxes/a'])
      await storage.put(key, Buffer.from(key), { contentType: 'text/plain' });

    expect(await storage.deletePrefix('inboxes/ab/')).toBe(3);
    expect(await storage.deletePrefix('inboxes/ab')).toBe(0);
    expect(await storage.deletePrefix('inboxes/a')).toBe(0); // an object, not a folder
    expect((await storage.get('inboxes/abc/1')).toString()).toBe('inboxes/abc/1');
    expect((await storage.get('inboxes/a')).toString()).toBe('inboxes/a');
    await expect(storage.get('inboxes/ab/x/3')).rejects.toThrow(NotFoundError);
  });

  it('sweeps what interrupted writes left in its temporary folder, once they are old enough', async () => {
    const temp = path.join(root, '.tmp');
    await mkdir(path.join(temp, 'detached-folder', 'a'), { recursive: true });
    await writeFile(path.join(temp, 'detached-folder', 'a', 'object'), 'x');
    await writeFile(path.join(temp, 'partial-write'), 'half of an obj');
    const cutoff = new Date(Date.now() + 1000);
    await writeFile(path.join(temp, 'write-under-way'), 'still writing');
    await utimes(path.join(temp, 'write-under-way'), cutoff, new Date(cutoff.getTime() + 5000));

    expect(await storage.sweepPartialWrites(cutoff)).toBe(2);
    expect(await readdir(temp)).toEqual(['write-under-way']);
    expect(await new LocalObjectStorage(path.join(parent, 'never-written')).sweepPartialWrites(cutoff)).toBe(0);
  });

  it('has no presigned URLs: the app signs its own', async () => {
    await expect(
      storage.presignedDownloadUrl('k/a', { expiresInSeconds: 60, filename: 'a.txt', contentType: 'text/plain' }),
    ).resolves.toBeUndefined();
  });

  describe('refuses keys that could leave the root or mean two things', () => {
    it.each([
      ['empty', ''],
      ['parent segment', '../outside'],
      ['parent segment inside', 'inboxes/../../outside'],
      ['current segment', 'inboxes/./a'],
      ['hidden segment (the temporary folder)', '.tmp/x'],
      ['absolute path', '/etc/passwd'],
      ['backslash', 'inboxes\\..\\..\\outside'],
      ['NUL', 'inboxes/a\u0000.txt'],
      ['newline', 'inboxes/a\nb'],
      ['empty segment', 'inboxes//a'],
      ['trailing slash', 'inboxes/a/'],
      ['too long', 'a'.repeat(1025)],
    ])('%s', async (_case, key) => {
      await writeFile(path.join(parent, 'outside'), 'secret');
      await expect(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(BadRequestError);
      await expect(storage.get(key)).rejects.toThrow(BadRequestError);
      await expect(storage.delete(key)).rejects.toThrow(BadRequestError);
      expect((await readFile(path.join(parent, 'outside'))).toString()).toBe('secret');
    });

    it.each([['../'], ['/'], [''], ['inboxes/../..'], ['a//']])('as a prefix: %j', async (prefix) => {
      await writeFile(path.join(parent, 'outside'), 'secret');
      await storage.put('inboxes/a', Buffer.from('x'), { contentType: 'text/plain' });
      await expect(storage.deletePrefix(prefix)).rejects.toThrow(BadRequestError);
      expect((await readFile(path.join(parent, 'outside'))).toString()).toBe('secret');
      expect((await storage.get('inboxes/a')).toString()).toBe('x');
    });

    it('accepts names in any script, spaces and dots inside segments', async () => {
      await storage.put('inboxes/ü ñ/файл.v2.pdf', Buffer.from('x'), { contentType: 'application/pdf' });
      expect((await storage.get('inboxes/ü ñ/файл.v2.pdf')).toString()).toBe('x');
    });
  });
});
