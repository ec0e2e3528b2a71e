import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Webhook authenticity checks that need no I/O (contract.md, Webhook authenticity). Secrets are
 * compared in constant time. SNS signatures, which need the signing certificate, are in sns.ts.
 */

/** How old a Mailgun timestamp may be (and how far in the future, for clock skew). */
export const MAILGUN_WINDOW_SECONDS = 5 * 60;
/** Mailgun's tokens are 50 hex digits; anything much longer is no token (and would not fit the index of used ones). */
const MAILGUN_TOKEN = /^[\x21-\x7e]{1,256}$/;

export interface MailgunSignature {
  timestamp: string;
  token: string;
  signature: string;
}

/**
 * Mailgun signs each request with HMAC-SHA256 of `timestamp + token` under the webhook signing
 * key, hex-encoded. Valid when the signature matches and the timestamp is within the window of
 * `now`; the caller also refuses a token it has seen before.
 */
export function checkMailgunSignature(
  signed: MailgunSignature,
  options: { signingKey: string; now: Date },
): { valid: true } | { valid: false; reason: string } {
  const timestamp = Number(signed.timestamp);
  if (!/^\d{1,12}$/.test(signed.timestamp) || !Number.isSafeInteger(timestamp)) {
    return { valid: false, reason: 'The Mailgun timestamp is missing or not a number' };
  }
  if (Math.abs(options.now.getTime() / 1000 - timestamp) > MAILGUN_WINDOW_SECONDS) {
    return { valid: false, reason: 'The Mailgun timestamp is outside the 5-minute window' };
  }
  if (!MAILGUN_TOKEN.test(signed.token)) {
    return { valid: false, reason: 'The Mailgun token is not 1 to 256 printable ASCII characters' };
  }
  const expected = createHmac('sha256', options.signingKey)
    .update(signed.timestamp + signed.token)
    .digest('hex');
  if (!/^[0-9a-f]{64}$/i.test(signed.signature) || !sameSecret(expected, signed.signature.toLowerCase())) {
    return { valid: false, reason: 'The Mailgun signature does not match' };
  }
  return { valid: true };
}

/**
 * SendGrid Inbound Parse has no signature of its own: the URL configured in SendGrid carries a
 * secret, as `?token=` or as the password of HTTP basic auth (any user name).
 */
export function checkSendgridSecret(
  request: { queryToken: string | undefined; authorization: string | undefined },
  secret: string,
): boolean {
  const [scheme, credentials] = (request.authorization ?? '').split(' ');
  let password: string | undefined;
  if (scheme?.toLowerCase() === 'basic' && credentials) {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    password = decoded.includes(':') ? decoded.slice(decoded.indexOf(':') + 1) : undefined;
  }
  // Both are compared, whichever is present, so that timing does not tell which one was tried.
  const byToken = sameSecret(secret, request.queryToken ?? '');
  const byPassword = sameSecret(secret, password ?? '');
  return (request.queryToken !== undefined && byToken) || (password !== undefined && byPassword);
}

/** Constant time whatever the lengths: digests are compared, not the strings. */
export function sameSecret(expected: string, presented: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}
