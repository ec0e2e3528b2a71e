/**
 * API key secrets: `inbx_`, 30 random base62 characters (178 bits), then 6 base62 characters of
 * the CRC-32 of those 30. The prefix lets secret scanners find leaked keys, and the checksum
 * lets them (and this service) tell a key from a look-alike without asking the database. Only
 * the SHA-256 of a secret is stored. Pure functions but for `newSecret`'s randomness.
 */
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const SECRET_PREFIX = 'inbx_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
/** How much of a secret a key's record shows: the prefix and 7 random characters. */
const SHOWN_LENGTH = SECRET_PREFIX.length + 7;
const SECRET = new RegExp(`^${SECRET_PREFIX}([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

export function newSecret(): string {
  let random = '';
  while (random.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(RANDOM_LENGTH)) {
      // 248 = 4 × 62: bytes above it are dropped, so every character is equally likely.
      if (byte < 248 && random.length < RANDOM_LENGTH) random += ALPHABET[byte % 62];
    }
  }
  return `${SECRET_PREFIX}${random}${checksum(random)}`;
}

/** Whether `value` has the form of a secret, checksum included. */
export function isWellFormedSecret(value: string): boolean {
  const match = SECRET.exec(value);
  return match !== null && checksum(match[1]!) === match[2];
}

/** Whether `value` presents itself as one of these keys (by its prefix), well formed or not. */
export function looksLikeSecret(value: string): boolean {
  return value.startsWith(SECRET_PREFIX);
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What a key's record shows of its secret, to recognise it by. */
export function shownPrefix(secret: string): string {
  return secret.slice(0, SHOWN_LENGTH);
}

function checksum(random: string): string {
  let value = crc32(random);
  let digits = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    digits = ALPHABET[value % 62]! + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}
