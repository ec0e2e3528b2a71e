import { createHash } from 'node:crypto';
import { BadRequestError, ConflictError } from '@repo/errors';
import type { Database } from '../database.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { SendMessageInput, SendResult } from './schemas.js';

/** A printable token of at most 255 characters, as clients generate them (UUIDs, hashes). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** A key is an inbox's: the same key in two inboxes names two sends. */
export interface KeyOfInbox {
  inboxId: string;
  key: string;
}

export interface IdempotentRequest extends KeyOfInbox {
  /** sha256 of the request: the same key with another request is refused. */
  requestHash: string;
}

/** The request's key, checked, with the hash that tells its request apart from others. */
export function idempotentRequest(
  inboxId: string,
  key: string,
  input: SendMessageInput,
  /** What else tells the request apart: the message a reply answers or a forward carries. */
  context: { answering?: string; forwarding?: string } = {},
): IdempotentRequest {
  if (!VALID_KEY.test(key)) throw new BadRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return { inboxId, key, requestHash: requestHash(input, context) };
}

/**
 * sha256 over the request, attachments' contents included, without building one more copy of
 * the (up to 33 MB) body as a string.
 */
function requestHash(input: SendMessageInput, context: { answering?: string; forwarding?: string }): string {
  const hash = createHash('sha256');
  const attachments = input.attachments ?? [];
  const extra = context.answering || context.forwarding ? { _context: context } : {};
  hash.update(JSON.stringify({ ...input, ...extra, attachments: attachments.map(({ content: _, ...rest }) => rest) }));
  for (const attachment of attachments) hash.update('\0').update(attachment.content);
  return hash.digest('hex');
}

/**
 * What an earlier send with this key says before anything is written: its answer to replay; a
 * 409 when the key went with another request, or when that send is still under way; nothing
 * when the key is free.
 */
export async function previousAnswer(db: Database, request: IdempotentRequest): Promise<SendResult | undefined> {
  const existing = await db.idempotencyKey.findUnique({
    where: { inboxId_key: { inboxId: request.inboxId, key: request.key } },
  });
  return existing ? answerOf(existing, request) : undefined;
}

/**
 * Claims the key in the transaction that records the message (then tied to it by
 * keyForMessage): either the claim (nothing returned), or, when another send took the key first,
 * that send's answer (a 409 when it has none yet).
 */
export async function claimIdempotencyKey(
  tx: Prisma.TransactionClient,
  request: IdempotentRequest,
): Promise<SendResult | undefined> {
  for (;;) {
    const claimed = await tx.$executeRaw`
      INSERT INTO idempotency_keys (inbox_id, key, request_hash)
      VALUES (${request.inboxId}::uuid, ${request.key}, ${request.requestHash})
      ON CONFLICT DO NOTHING`;
    if (claimed === 1) return undefined;
    const existing = await tx.idempotencyKey.findUnique({
      where: { inboxId_key: { inboxId: request.inboxId, key: request.key } },
    });
    // Released by a failed send in the meantime: this one may take it.
    if (existing) return answerOf(existing, request);
  }
}

/** Ties a claimed key to the message its send recorded, so that the send's outcome completes or releases it. */
export async function keyForMessage(tx: Prisma.TransactionClient, key: KeyOfInbox, messageId: string): Promise<void> {
  await tx.idempotencyKey.update({ where: { inboxId_key: { inboxId: key.inboxId, key: key.key } }, data: { messageId } });
}

/** 409 when the key went with another request than `request` (a hash of null: recorded before hashes were). */
export function requireSameRequest(requestHash: string | null, request: IdempotentRequest): void {
  if (requestHash !== null && requestHash !== request.requestHash) {
    throw new ConflictError('This Idempotency-Key was already used with a different request', {
      idempotency_key: request.key,
    });
  }
}

function answerOf(existing: { requestHash: string; response: unknown }, request: IdempotentRequest): SendResult {
  requireSameRequest(existing.requestHash, request);
  if (existing.response) return existing.response as SendResult;
  throw new ConflictError('A send with this Idempotency-Key is under way; retry once it has ended', {
    idempotency_key: request.key,
  });
}
