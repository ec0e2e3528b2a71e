import { createHash } from 'node:crypto';
import { BadRequestError, ConflictError } from '@repo/errors';
import { isUniqueViolation } from '@repo/db';
import type { Database } from '../database.js';
import type { SendResult } from './schemas.js';

/** A printable token of at most 255 characters, as clients generate them (UUIDs, hashes). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** A key is an inbox's: the same key in two inboxes names two sends. */
interface KeyOfInbox {
  inboxId: string;
  key: string;
}

type Claim = { replay: SendResult } | { claimed: KeyOfInbox };

/**
 * Claims an Idempotency-Key for a send before anything is sent. The same key again returns the
 * first send's result; with another request it is refused; while the first send is in flight,
 * or if it ended without its result being recorded, it is refused rather than sent twice.
 */
export async function claimIdempotencyKey(
  db: Database,
  { inboxId, key, request }: KeyOfInbox & { request: unknown },
): Promise<Claim> {
  if (!VALID_KEY.test(key)) throw new BadRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters');
  const requestHash = createHash('sha256').update(JSON.stringify(request)).digest('hex');
  try {
    await db.idempotencyKey.create({ data: { inboxId, key, requestHash } });
    return { claimed: { inboxId, key } };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  const existing = await db.idempotencyKey.findUnique({ where: { inboxId_key: { inboxId, key } } });
  // Released by a failed first attempt in the meantime: this attempt may send.
  if (!existing) return claimIdempotencyKey(db, { inboxId, key, request });
  if (existing.requestHash !== requestHash) {
    throw new ConflictError('This Idempotency-Key was already used with a different request', { idempotency_key: key });
  }
  if (existing.response) return { replay: existing.response as SendResult };
  throw new ConflictError(
    'A send with this Idempotency-Key is in progress or ended without a recorded result; it is not repeated',
    {
      idempotency_key: key,
    },
  );
}

/** Gives the key back after a send that certainly sent nothing, so the client can retry. */
export async function releaseIdempotencyKey(db: Database, claim: KeyOfInbox): Promise<void> {
  await db.idempotencyKey.deleteMany({ where: { inboxId: claim.inboxId, key: claim.key, completedAt: null } });
}
