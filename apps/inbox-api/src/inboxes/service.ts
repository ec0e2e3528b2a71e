import type { CrashPoint } from '@repo/config';
import { ConflictError, NotFoundError } from '@repo/errors';
import { isUniqueViolation } from '@repo/db';
import type { ObjectStorage } from '@repo/storage';
import type { Database } from '../database.js';
import type { Inbox, Prisma } from '../generated/prisma/client.js';
import { isUuid } from '../shared/ids.js';
import { page, type Page } from '../shared/schemas.js';
import type { CreateInboxInput, InboxResponse } from './schemas.js';

export function toInboxResponse(inbox: Inbox): InboxResponse {
  return { id: inbox.id, name: inbox.name, email_address: inbox.emailAddress, created_at: inbox.createdAt.toISOString() };
}

export async function createInbox(db: Database, emailDomain: string, input: CreateInboxInput): Promise<InboxResponse> {
  const emailAddress = `${input.email_username}@${emailDomain}`;
  try {
    return toInboxResponse(await db.inbox.create({ data: { name: input.name, emailAddress } }));
  } catch (error) {
    if (isUniqueViolation(error, ['email_address']))
      throw new ConflictError(`The address ${emailAddress} is taken`, { email_address: emailAddress });
    throw error;
  }
}

/** The inbox, or 404. Ids that are not UUIDs cannot exist and are not found either, nor can an inbox being deleted. */
export async function findInbox(db: Database, inboxId: string): Promise<Inbox> {
  const inbox = isUuid(inboxId) ? await db.inbox.findFirst({ where: { id: inboxId, deletedAt: null } }) : null;
  if (!inbox) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  return inbox;
}

/**
 * In a transaction that starts a send: holds the inbox so that a delete waits for the
 * transaction, and answers 404 when a delete has begun. A delete then waits for the sends whose
 * records committed (see deleteInbox); no send starts once it has begun.
 */
export async function holdLiveInbox(tx: Prisma.TransactionClient, inboxId: string): Promise<void> {
  const [live] = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM inboxes WHERE id = ${inboxId}::uuid AND deleted_at IS NULL FOR SHARE`;
  if (!live) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
}

export async function listInboxes(db: Database, options: { limit: number; offset: number }): Promise<Page<InboxResponse>> {
  const where = { deletedAt: null };
  const [inboxes, total] = await Promise.all([
    db.inbox.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: options.limit, skip: options.offset }),
    db.inbox.count({ where }),
  ]);
  return page(inboxes.map(toInboxResponse), total);
}

export interface InboxRemoval {
  db: Database;
  storage: ObjectStorage;
  crashPoint: CrashPoint;
}

/**
 * Deletes the inbox with its threads, messages and the stored bytes of its attachments. The
 * inbox is marked first, which makes it gone for the API and lets no send start from it; sends
 * whose records were committed before are waited for (up to `waitSeconds`), so that none answers
 * 500 after its mail left. Then files, then rows: a crash in between leaves the mark, and the
 * reconciler finishes the removal.
 */
export async function deleteInbox(deps: InboxRemoval, inboxId: string, options: { waitSeconds: number }): Promise<void> {
  if (!isUuid(inboxId)) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  const { count } = await deps.db.inbox.updateMany({ where: { id: inboxId, deletedAt: null }, data: { deletedAt: new Date() } });
  if (count === 0) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  deps.crashPoint('inbox-delete:marked');
  await waitForSends(deps.db, inboxId, options.waitSeconds);
  await removeInbox(deps, inboxId);
}

/** Waits until no send of the inbox is `sending` under a valid lease, or `waitSeconds` pass. */
async function waitForSends(db: Database, inboxId: string, waitSeconds: number): Promise<void> {
  const deadline = Date.now() + waitSeconds * 1000;
  while (Date.now() < deadline) {
    const [{ count }] = await db.$queryRaw<[{ count: bigint }]>`
      SELECT count(*) AS count FROM messages
       WHERE inbox_id = ${inboxId}::uuid AND status = 'sending' AND lease_until > now()`;
    if (count === 0n) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The removal proper of an inbox marked deleted: its files, then its rows (which cascade). */
export async function removeInbox(deps: InboxRemoval, inboxId: string): Promise<void> {
  await deps.storage.deletePrefix(attachmentPrefix(inboxId));
  deps.crashPoint('inbox-delete:files-removed');
  await deps.db.inbox.deleteMany({ where: { id: inboxId, deletedAt: { not: null } } });
}

export function attachmentPrefix(inboxId: string): string {
  return `inboxes/${inboxId}/`;
}
