import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-signed links for objects the app serves itself (local storage): the token is an
 * HMAC-SHA256 over the URL path and the expiry, so it opens exactly one path until one moment.
 * A link looks like `<path>?token=<token>&expires=<epoch seconds>`.
 */
export function signUrlPath(path: string, expiresAtEpochSeconds: number, secret: string): string {
  if (!Number.isSafeInteger(expiresAtEpochSeconds)) throw new RangeError('expiresAtEpochSeconds must be an integer');
  return mac(path, expiresAtEpochSeconds, secret).toString('base64url');
}

export type UrlTokenCheck = 'valid' | 'expired' | 'invalid';

/**
 * Checks a token from a link made by `signUrlPath`. `expires` is taken as it arrived in the
 * query string; `invalid` covers a malformed expiry, a forged token and a token for another path.
 * A correctly signed but outdated link answers `expired`, so the client can be told to ask for
 * a fresh one.
 */
export function verifyUrlToken(
  path: string,
  expires: string | number,
  token: string,
  secret: string,
  nowEpochSeconds: number = Date.now() / 1000,
): UrlTokenCheck {
  const expiresAt = typeof expires === 'number' ? expires : /^\d{1,15}$/.test(expires) ? Number(expires) : NaN;
  if (!Number.isSafeInteger(expiresAt)) return 'invalid';
  // The encoded tokens are compared, so that no other spelling of the same bytes passes; in
  // constant time, after a length check because timingSafeEqual demands equal lengths.
  const expected = Buffer.from(mac(path, expiresAt, secret).toString('base64url'));
  const given = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return nowEpochSeconds < expiresAt ? 'valid' : 'expired';
}

function mac(path: string, expiresAt: number, secret: string): Buffer {
  if (secret === '') throw new RangeError('The URL signing secret must not be empty');
  // A newline cannot occur in a URL path, so no (path, expiry) pair can pose as another.
  return createHmac('sha256', secret).update(`${path}\n${expiresAt}`).digest();
}
