import { randomFillSync } from 'node:crypto';

/**
 * A new UUID version 7 (RFC 9562): the millisecond time first, then random bits, as Prisma makes
 * them for `@default(uuid(7))`. For rows written with SQL of our own, which Prisma's default skips.
 */
export function uuidv7(now = Date.now()): string {
  const bytes = Buffer.from(nextRandom16());
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Random bytes drawn 256 ids at a time: one call to the system's generator per id cost about
// 20 ms of the event loop for the 10,000 attachment rows of one mail (inbox-api).
const pool = Buffer.alloc(16 * 256);
let used = pool.length;

function nextRandom16(): Buffer {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}
