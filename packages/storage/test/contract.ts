import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { BadRequestError, NotFoundError, PayloadTooLargeError } from '@repo/errors';
import type { ObjectStorage } from '../src/index.js';

const bytes = async (storage: ObjectStorage, key: string) => Buffer.concat(await (await storage.open(key)).stream.toArray());

/**
 * What an ObjectStorage whose downloads the app serves (local, database) does, whatever holds
 * the bytes. `fresh` answers an empty store for each test; the backend's own suite adds what is
 * particular to it.
 */
export function describeObjectStorageContract(name: string, fresh: () => Promise<ObjectStorage>): void {
  describe(`${name}: the ObjectStorage contract`, () => {
    let storage: ObjectStorage;
    beforeEach(async () => {
      storage = await fresh();
    });

    it('stores bytes under the key and reads them back, whole and as a stream', async () => {
      const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const stored = await storage.put('inboxes/i1/attachments/a1', body, { contentType: 'application/octet-stream' });

      expect(stored).toEqual({ size: 256, sha256: createHash('sha256').update(body).digest('hex') });
      expect(await storage.get('inboxes/i1/attachments/a1')).toEqual(body);
      const opened = await storage.open('inboxes/i1/attachments/a1');
      expect(opened.size).toBe(256);
      expect(Buffer.concat(await opened.stream.toArray())).toEqual(body);
    });

    it('stores bytes in shared memory (a raw mail the content workers read), larger than hashed in place', async () => {
      const body = Buffer.from(new SharedArrayBuffer(2 * 1024 * 1024 + 3));
      for (let i = 0; i < body.length; i += 4096) body[i] = i % 251;
      const stored = await storage.put('k/shared', body, { contentType: 'message/rfc822' });
      expect(stored).toEqual({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      expect((await storage.get('k/shared')).equals(body)).toBe(true);
    });

    it('stores an empty object', async () => {
      expect(await storage.put('k/empty', Buffer.alloc(0), { contentType: 'text/plain' })).toMatchObject({ size: 0 });
      expect(await storage.get('k/empty')).toEqual(Buffer.alloc(0));
      expect(await bytes(storage, 'k/empty')).toEqual(Buffer.alloc(0));
    });

    it('replaces an object', async () => {
      await storage.put('k/a', Buffer.from('old'), { contentType: 'text/plain' });
      await storage.put('k/a', Buffer.from('new'), { contentType: 'text/plain' });

      expect((await storage.get('k/a')).toString()).toBe('new');
      expect(await text((await storage.open('k/a')).stream)).toBe('new');
    });

    it('streams the version it opened when the object is replaced before the stream is read', async () => {
      await storage.put('k/a', Buffer.alloc(1 << 20, 'a'), { contentType: 'application/octet-stream' });
      const opened = await storage.open('k/a');
      await storage.put('k/a', Buffer.alloc(2 << 20, 'b'), { contentType: 'application/octet-stream' });

      expect(opened.size).toBe(1 << 20);
      // equals(), not toEqual(): jest compares megabytes element by element, for seconds.
      expect(Buffer.concat(await opened.stream.toArray()).equals(Buffer.alloc(1 << 20, 'a'))).toBe(true);
    });

    it('shows concurrent readers the old object or the new one, never a part', async () => {
      const old = Buffer.alloc(8 << 20, 'a');
      const replacement = Buffer.alloc(8 << 20, 'b');
      await storage.put('k/big', old, { contentType: 'application/octet-stream' });

      const write = storage.put('k/big', replacement, { contentType: 'application/octet-stream' });
      const reads = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? storage.get('k/big') : bytes(storage, 'k/big'))),
      );
      await write;

      for (const read of reads) expect(read.equals(old) || read.equals(replacement)).toBe(true);
    });

    it('answers a missing object, or a folder, with NotFoundError', async () => {
      await storage.put('k/a/b', Buffer.from('x'), { contentType: 'text/plain' });

      for (const key of ['k/missing', 'k/a', 'k/a/b/c']) {
        await expect(storage.get(key)).rejects.toThrow(NotFoundError);
        await expect(storage.open(key)).rejects.toThrow(NotFoundError);
      }
    });

    it('deletes idempotently', async () => {
      await storage.put('k/a', Buffer.from('x'), { contentType: 'text/plain' });

      await storage.delete('k/a');
      await storage.delete('k/a');
      await storage.delete('never/written');
      await expect(storage.get('k/a')).rejects.toThrow(NotFoundError);
    });

    it('deletes a folder and counts its objects, leaving names that merely share its start', async () => {
      for (const key of ['inboxes/ab/1', 'inboxes/ab/2', 'inboxes/ab/x/3', 'inboxes/abc/1', 'inboxes/a', 'inboxes/ab%/1'])
        await storage.put(key, Buffer.from(key), { contentType: 'text/plain' });

      expect(await storage.deletePrefix('inboxes/ab/')).toBe(3);
      expect(await storage.deletePrefix('inboxes/ab')).toBe(0);
      expect(await storage.deletePrefix('inboxes/a')).toBe(0); // an object, not a folder
      expect((await storage.get('inboxes/abc/1')).toString()).toBe('inboxes/abc/1');
      expect((await storage.get('inboxes/a')).toString()).toBe('inboxes/a');
      expect((await storage.get('inboxes/ab%/1')).toString()).toBe('inboxes/ab%/1');
      await expect(storage.get('inboxes/ab/x/3')).rejects.toThrow(NotFoundError);
    });

    it('has no presigned URLs: the app signs its own', async () => {
      await expect(
        storage.presignedDownloadUrl('k/a', { expiresInSeconds: 60, filename: 'a.txt', contentType: 'text/plain' }),
      ).resolves.toBeUndefined();
      await expect(
        storage.presignedUploadUrl('k/a', { expiresInSeconds: 60, contentType: 'text/plain' }),
      ).resolves.toBeUndefined();
    });

    it('stores a stream as it arrives, and nothing of one larger than maxBytes', async () => {
      const body = Buffer.alloc(3 << 20, 'x');
      const stored = await storage.putStream('k/stream', Readable.from([body.subarray(0, 1 << 20), body.subarray(1 << 20)]), {
        contentType: 'application/octet-stream',
        maxBytes: body.length,
      });
      expect(stored).toEqual({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      expect((await bytes(storage, 'k/stream')).equals(body)).toBe(true);

      await expect(
        storage.putStream('k/too-large', Readable.from([body]), { contentType: 'text/plain', maxBytes: body.length - 1 }),
      ).rejects.toThrow(PayloadTooLargeError);
      await expect(storage.get('k/too-large')).rejects.toThrow(NotFoundError);
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
        await expect(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(BadRequestError);
        await expect(storage.get(key)).rejects.toThrow(BadRequestError);
        await expect(storage.open(key)).rejects.toThrow(BadRequestError);
        await expect(storage.delete(key)).rejects.toThrow(BadRequestError);
      });

      it.each([['../'], ['/'], [''], ['inboxes/../..'], ['a//']])('as a prefix: %j', async (prefix) => {
        await storage.put('inboxes/a', Buffer.from('x'), { contentType: 'text/plain' });
        await expect(storage.deletePrefix(prefix)).rejects.toThrow(BadRequestError);
        expect((await storage.get('inboxes/a')).toString()).toBe('x');
      });

      it('accepts names in any script, spaces and dots inside segments', async () => {
        await storage.put('inboxes/ü ñ/файл.v2.pdf', Buffer.from('x'), { contentType: 'application/pdf' });
        expect((await storage.get('inboxes/ü ñ/файл.v2.pdf')).toString()).toBe('x');
      });
    });
  });
}
