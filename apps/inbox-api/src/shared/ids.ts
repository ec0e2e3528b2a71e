import { randomBytes } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Records are keyed by UUID; any other string cannot name one and is simply not found. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * A new UUID version 7 (RFC 9562): the millisecond time first, then random bits, as Prisma makes
 * them for `@default(uuid(7))`. For rows written with SQL of our own, which Prisma's default skips.
 */
export function uuidv7(): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
