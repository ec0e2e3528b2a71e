import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BadRequestError } from '@repo/errors';
import { LocalObjectStorage } from '../src/index.js';
import { describeObjectStorageContract } from './contract.js';

let parent: string;
let root: string;
let storage: LocalObjectStorage;

beforeEach(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'storage-'));
  root = path.join(parent, 'objects');
  storage = new LocalObjectStorage(root);
});
afterEach(() => rm(parent, { recursive: true, force: true }));

describeObjectStorageContract('LocalObjectStorage', () => Promise.resolve(storage));

describe('LocalObjectStorage', () => {
  it('stores each object as a file at its key’s path', async () => {
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await storage.put('inboxes/i1/attachments/a1', body, { contentType: 'application/octet-stream' });

    expect(await readFile(path.join(root, 'inboxes', 'i1', 'attachments', 'a1'))).toEqual(body);
    expect(storage.backend).toBe('local');
  });

  it('replaces an object and leaves no temporary file behind', async () => {
    await storage.put('k/a', Buffer.from('old'), { contentType: 'text/plain' });
    await storage.put('k/a', Buffer.from('new'), { contentType: 'text/plain' });

    expect((await storage.get('k/a')).toString()).toBe('new');
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
  });

  it('removes the temporary file when a write cannot be put in place', async () => {
    await mkdir(path.join(root, 'k', 'folder', 'inside'), { recursive: true });

    await expect(storage.put('k/folder', Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow();
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
  });

  it('completes writes that race the removal of their folder (they land after it)', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `inboxes/busy/attachments/${i}`);
    let writing = true;
    let removed = 0;
    const remover = (async () => {
      while (writing) removed += await storage.deletePrefix('inboxes/busy/');
    })();

    await Promise.all(keys.map((key) => storage.put(key, Buffer.from(key), { contentType: 'text/plain' })));
    writing = false;
    await remover;
    const kept = (await readdir(path.join(root, 'inboxes', 'busy', 'attachments')).catch(() => [])).length;
    expect(removed + kept).toBe(keys.length);
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
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

  it('never reaches a file outside its root through a refused key or prefix', async () => {
    await writeFile(path.join(parent, 'outside'), 'secret');
    for (const key of ['../outside', 'inboxes/../../outside', 'inboxes\\..\\..\\outside']) {
      await expect(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(BadRequestError);
      await expect(storage.delete(key)).rejects.toThrow(BadRequestError);
    }
    for (const prefix of ['../', 'inboxes/../..']) await expect(storage.deletePrefix(prefix)).rejects.toThrow(BadRequestError);
    expect((await readFile(path.join(parent, 'outside'))).toString()).toBe('secret');
  });
});
