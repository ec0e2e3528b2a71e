import { ConflictError, NotFoundError } from '@repo/errors';
import { isUniqueViolation } from '@repo/db';
import type { ObjectStorage } from '@repo/storage';
import type { Database } from '../database.js';
import type { Inbox } from '../generated/prisma/client.js';
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

/** The inbox, or 404. Ids that are not UUIDs cannot exist and are not found either. */
export async function findInbox(db: Database, inboxId: string): Promise<Inbox> {
  const inbox = isUuid(inboxId) ? await db.inbox.findUnique({ where: { id: inboxId } }) : null;
  if (!inbox) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  return inbox;
}

export async function listInboxes(db: Database, options: { limit: number; offset: number }): Promise<Page<InboxResponse>> {
  const [inboxes, total] = await Promise.all([
    db.inbox.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: options.limit, skip: options.offset }),
    db.inbox.count(),
  ]);
  return page(inboxes.map(toInboxResponse), total);
}

/** Removes the inbox with its threads, messages and the stored bytes of its attachments. */
export async function deleteInbox(deps: { db: Database; storage: ObjectStorage }, inboxId: string): Promise<void> {
  const inbox = await findInbox(deps.db, inboxId);
  // Rows first: if removing the bytes then fails, nothing points at the leftovers.
  await deps.db.inbox.delete({ where: { id: inbox.id } });
  await deps.storage.deletePrefix(attachmentPrefix(inbox.id));
}

export function attachmentPrefix(inboxId: string): string {
  return `inboxes/${inboxId}/`;
}
