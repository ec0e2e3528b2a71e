import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { violatedUniqueIndex } from '@repo/db';
import { UnauthorizedError } from '@repo/errors';
import type { Database } from '../database.js';
import type { WebhookBody } from './body.js';
import { MAILGUN_WINDOW_SECONDS } from './verify.js';

/*
 * Mailgun webhook tokens already used, in the database so that every replica refuses a replay.
 * Mailgun signs the timestamp and token only, not the body: a token seen once must not carry
 * another request.
 *
 * Inbound mail may be stored in several inboxes, one transaction each, so its token cannot go in
 * one transaction with the mail. It is claimed before the first copy, with the digest of the
 * request's fields, and marked handled after the last (handleClaimed). While it is claimed, only a
 * request with the same fields may use it: Mailgun's retry of a request that failed or was cut
 * short by a crash stores the copies still missing (each inbox stores a Message-ID once), and a
 * replay carrying other fields stores nothing, not even racing the first request. Once handled, the
 * token refuses every request.
 *
 * Delivery events are applied in one transaction, and their token is inserted first in it
 * (delivery-status.ts): of two requests racing with one token, only one applies its body.
 */

export const REPLAYED = 'This Mailgun token was used before: the request is a replay';

/** A webhook token (Mailgun's) that signed a request. */
export interface ReplayToken {
  token: string;
  /** When its signature leaves the window in which it could be presented again. */
  expiresAt: Date;
}

/** The token of a request signed at `signedAt` (Unix seconds): kept as long as its signature is in the window. */
export function replayToken(token: string, signedAt: number): ReplayToken {
  return { token, expiresAt: new Date((signedAt + MAILGUN_WINDOW_SECONDS) * 1000) };
}

/** Bytes hashed per turn of the event loop: a 38 MB request does not hold it (about 1 ms a slice). */
const DIGEST_SLICE_BYTES = 1024 * 1024;

/**
 * SHA-256 of a request's fields and files, whatever their order and the form's encoding (a retry
 * may come with another multipart boundary): each name, value and file is length-prefixed.
 */
export async function requestDigest(body: WebhookBody): Promise<string> {
  const hash = createHash('sha256');
  const add = async (bytes: Buffer) => {
    hash.update(`${bytes.length}:`);
    for (let start = 0; start < bytes.length; start += DIGEST_SLICE_BYTES) {
      if (start > 0) await setImmediate();
      hash.update(bytes.subarray(start, start + DIGEST_SLICE_BYTES));
    }
  };
  const text = (value: string) => add(Buffer.from(value, 'utf8'));
  for (const name of [...body.fields.keys()].sort()) {
    await text(name);
    await add(body.fields.get(name)!);
  }
  for (const file of body.files) {
    for (const value of [file.field, file.filename, file.contentType]) await text(value);
    await add(file.content);
  }
  return hash.digest('hex');
}

/**
 * Handles an inbound request signed with `token` whose fields have `digest`: claims the token
 * (401 when a request with other fields used it, or when one was handled), runs `handle`, then
 * marks the token handled. A failure or a crash in between leaves it claimed for Mailgun's retry.
 */
export async function handleClaimed<T>(
  db: Database,
  claim: { token: ReplayToken; digest: string },
  handle: () => Promise<T>,
): Promise<T> {
  const { token, expiresAt } = claim.token;
  const claimed = await db.$queryRaw<{ token: string }[]>`
    INSERT INTO webhook_tokens (token, expires_at, request_digest, handled)
    VALUES (${token}, ${expiresAt}::timestamptz, ${claim.digest}, false)
    ON CONFLICT (token) DO UPDATE SET handled = false
     WHERE NOT webhook_tokens.handled AND webhook_tokens.request_digest = EXCLUDED.request_digest
    RETURNING token`;
  if (claimed.length === 0) throw new UnauthorizedError(REPLAYED);
  const result = await handle();
  await db.$executeRaw`UPDATE webhook_tokens SET handled = true WHERE token = ${token}`;
  return result;
}

/** Runs `handle`, whose transaction inserts `token` first (delivery-status.ts): 401 when another request inserted it. */
export async function refusingReplays<T>(handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (error) {
    if (violatedUniqueIndex(error) === 'webhook_tokens_pkey') throw new UnauthorizedError(REPLAYED);
    throw error;
  }
}

/** Tokens whose signature has left the window cannot be replayed anyway (the timestamp is refused). */
export async function removeExpiredWebhookTokens(db: Database): Promise<number> {
  const { count } = await db.webhookToken.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 60_000) } } });
  return count;
}
