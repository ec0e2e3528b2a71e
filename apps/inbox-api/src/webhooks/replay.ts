import type { Database } from '../database.js';
import type { ReplayToken } from '../messages/records.js';
import { MAILGUN_WINDOW_SECONDS } from './verify.js';

/*
 * Mailgun webhook tokens already used, in the database so that every replica refuses a replay.
 * Mailgun signs the timestamp and token only, not the body: a token seen once must not carry
 * another request. A token is recorded when its request has been handled, never before: with
 * the message the request stores (in the same statement, records.ts), or, when the request
 * stores nothing new (a redelivery, mail for no inbox, a virus), by recordUsedToken once it is
 * answered. A request that fails or is cut short by a crash leaves its token unused, so that
 * Mailgun's retry of it is no replay. Two deliveries of one request at the same moment store
 * the mail once (the Message-ID's unique index), the later one answered as a duplicate or, when
 * its token was recorded first, as a replay.
 */

/** The token of a request signed at `signedAt` (Unix seconds): kept as long as its signature is in the window. */
export function replayToken(token: string, signedAt: number): ReplayToken {
  return { token, expiresAt: new Date((signedAt + MAILGUN_WINDOW_SECONDS) * 1000) };
}

/** True when a request with this token has been handled before: the request is a replay. */
export async function isUsedToken(db: Database, token: string): Promise<boolean> {
  return (await db.webhookToken.count({ where: { token } })) > 0;
}

/** Records the token of a handled request; nothing when its message's statement has already done so. */
export async function recordUsedToken(db: Database, { token, expiresAt }: ReplayToken): Promise<void> {
  await db.$executeRaw`
    INSERT INTO webhook_tokens (token, expires_at) VALUES (${token}, ${expiresAt}::timestamptz) ON CONFLICT DO NOTHING`;
}

/** The failure of a message's statement whose token was recorded meanwhile by another request with it. */
export function isReplayedToken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'webhook_tokens_pkey';
}

/** Tokens whose signature has left the window cannot be replayed anyway (the timestamp is refused). */
export async function removeExpiredWebhookTokens(db: Database): Promise<number> {
  const { count } = await db.webhookToken.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 60_000) } } });
  return count;
}
