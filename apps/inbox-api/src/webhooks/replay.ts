import { violatedUniqueIndex } from '@repo/db';
import { UnauthorizedError } from '@repo/errors';
import type { Database } from '../database.js';
import type { ReplayToken } from '../messages/records.js';
import { MAILGUN_WINDOW_SECONDS } from './verify.js';

/*
 * Mailgun webhook tokens already used, in the database so that every replica refuses a replay.
 * Mailgun signs the timestamp and token only, not the body: a token seen once must not carry
 * another request. A token is recorded when its request has been handled, never before: with
 * the message the request stores (in the same statement, records.ts), with the delivery events it
 * applies (first in their transaction, delivery-status.ts, so that of two requests racing with one
 * token only one applies its body), or, when the request stores nothing new (a redelivery, mail
 * for no inbox, a virus), by handleWithToken once it is answered. A request that fails or is cut short by a crash leaves its token unused, so that
 * Mailgun's retry of it is no replay. Two deliveries of one request at the same moment store
 * the mail once (the Message-ID's unique index), the later one answered as a duplicate or, when
 * its token was recorded first, as a replay.
 */

export const REPLAYED = 'This Mailgun token was used before: the request is a replay';

/** The token of a request signed at `signedAt` (Unix seconds): kept as long as its signature is in the window. */
export function replayToken(token: string, signedAt: number): ReplayToken {
  return { token, expiresAt: new Date((signedAt + MAILGUN_WINDOW_SECONDS) * 1000) };
}

/** True when a request with this token has been handled before: the request is a replay. */
export async function isUsedToken(db: Database, token: string): Promise<boolean> {
  return (await db.webhookToken.count({ where: { token } })) > 0;
}

/**
 * Handles the request of `token` (`handle` passes it on to the statement that records the
 * message), then records the token if that statement did not: 401 when another request with the
 * token was recorded meanwhile. Nothing is recorded when `handle` fails.
 */
export async function handleWithToken<T>(
  db: Database,
  token: ReplayToken,
  handle: (token: ReplayToken) => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await handle(token);
  } catch (error) {
    if (isReplayedToken(error)) throw new UnauthorizedError(REPLAYED);
    throw error;
  }
  await db.$executeRaw`
    INSERT INTO webhook_tokens (token, expires_at) VALUES (${token.token}, ${token.expiresAt}::timestamptz)
    ON CONFLICT DO NOTHING`;
  return result;
}

/**
 * The failure of a statement whose token was recorded meanwhile by another request with it: the
 * message's (node-postgres's error) or the delivery events' transaction (Prisma's).
 */
function isReplayedToken(error: unknown): boolean {
  return violatedUniqueIndex(error) === 'webhook_tokens_pkey';
}

/** Tokens whose signature has left the window cannot be replayed anyway (the timestamp is refused). */
export async function removeExpiredWebhookTokens(db: Database): Promise<number> {
  const { count } = await db.webhookToken.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 60_000) } } });
  return count;
}
