/**
 * describeStored hashes a body a megabyte per turn of the event loop: it gives the SHA-256
 * node:crypto gives, on each side of a part's edge, in memory of its own or shared with workers,
 * and lets other work run between parts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describeStored } from '../src/index.js';

const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');

it.each([0, 1, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 7])('hashes %i bytes as node:crypto does', async (size) => {
  const body = randomBytes(size);
  await expect(describeStored(body)).resolves.toEqual({ size, sha256: sha256(body) });
});

it.each([1024 * 1024 + 1, 3 * 1024 * 1024 + 7])('hashes %i bytes in shared memory', async (size) => {
  const body = Buffer.from(new SharedArrayBuffer(size));
  randomBytes(size).copy(body);
  await expect(describeStored(body)).resolves.toEqual({ size, sha256: sha256(body) });
});

it('lets the event loop take its turn between the parts of a large body', async () => {
  const body = randomBytes(3 * 1024 * 1024 + 7);
  let turns = 0;
  const count = () => {
    turns += 1;
    if (turns < 100) setImmediate(count);
  };
  setImmediate(count);
  const described = await describeStored(body);
  expect(described.sha256).toBe(sha256(body));
  // Four parts: three turns of the loop between them, each running the counter once.
  expect(turns).toBeGreaterThanOrEqual(3);
});
