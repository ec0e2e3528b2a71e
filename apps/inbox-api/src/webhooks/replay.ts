import type { Database } from '../database.js';
import { MAILGUN_WINDOW_SECONDS } from './verify.js';

/*
 * Mailgun webhook tokens already used, in the database so that every replica refuses a replay.
 * A token is claimed before its request is processed and given back when processing fails, so
 * that the provider's retry of the same request is not taken for a replay.
 */

/** True when the token was free and is now this request's; false when a request used it before. */
export async function claimWebhookToken(db: Database, token: string, signedAt: number): Promise<boolean> {
  const claimed = await db.$executeRaw`
    INSERT INTO webhook_tokens (token, expires_at)
    VALUES (${token}, to_timestamp(${signedAt + MAILGUN_WINDOW_SECONDS}))
    ON CONFLICT DO NOTHING`;
  return claimed === 1;
}

export async function releaseWebhookToken(db: Database, token: string): Promise<void> {
  await db.webhookToken.deleteMany({ where: { token } });
}

/** Tokens whose signature has left the window cannot be replayed anyway (the timestamp is refused). */
export async function removeExpiredWebhookTokens(db: Database): Promise<number> {
  const { count } = await db.webhookToken.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 60_000) } } });
  return count;
}
