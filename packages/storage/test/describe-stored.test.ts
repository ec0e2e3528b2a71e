/**
 * describeStored hashes small bodies in place and large ones on the thread pool (WebCrypto): both
 * give the SHA-256 node:crypto gives, on each side of the boundary, in memory of its own or shared
 * with workers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describeStored } from '../src/index.js';

it.each([0, 1, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 7])('hashes %i bytes as node:crypto does', async (size) => {
  const body = randomBytes(size);
  await expect(describeStored(body)).resolves.toEqual({ size, sha256: createHash('sha256').update(body).digest('hex') });
});

it.each([1024 * 1024 + 1, 3 * 1024 * 1024 + 7])('hashes %i bytes in shared memory (which WebCrypto refuses)', async (size) => {
  const body = Buffer.from(new SharedArrayBuffer(size));
  randomBytes(size).copy(body);
  await expect(describeStored(body)).resolves.toEqual({ size, sha256: createHash('sha256').update(body).digest('hex') });
});
