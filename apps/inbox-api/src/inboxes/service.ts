import type { CrashPoint } from '@repo/config';
import { ConflictError, NotFoundError } from '@repo/errors';
import { isForeignKeyViolation, isUniqueViolation } from '@repo/db';
import type { ObjectStorage } from '@repo/storage';
import {
  canReachInbox,
  inboxFilter,
  organizationFor,
  organizationNotFound,
  requireWholeOrganization,
  type Scope,
} from '../api-keys/scope.js';
import type { Database } from '../database.js';
import { removeInboxEvents } from '../events/log.js';
import type { Inbox, Prisma } from '../generated/prisma/client.js';
import { waitForSends } from '../messages/outbox.js';
import { findOrganization } from '../organizations/service.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import type { CreateInboxInput, InboxResponse, UpdateInboxInput } from './schemas.js';

export function toInboxResponse(inbox: Inbox): InboxResponse {
  return {
    id: inbox.id,
    name: inbox.name,
    email_address: inbox.emailAddress,
    organization_id: inbox.organizationId,
    sending_enabled: inbox.sendingEnabled,
    send_policy: inbox.sendPolicy,
    created_at: inbox.createdAt.toISOString(),
  };
}

/**
 * Creates an inbox in the organization named (within the scope: 404 otherwise), or the caller's
 * own (`default` for operators). A key limited to some inboxes cannot (403): it could not reach
 * the new one.
 */
export async function createInbox(
  db: Database,
  emailDomain: string,
  scope: Scope,
  input: CreateInboxInput,
): Promise<InboxResponse> {
  requireWholeOrganization(scope);
  const organizationId = organizationFor(scope, input.organization_id);
  await findOrganization(db, scope, organizationId);
  const emailAddress = `${input.email_username}@${emailDomain}`;
  try {
    return toInboxResponse(await db.inbox.create({ data: { name: input.name, emailAddress, organizationId } }));
  } catch (error) {
    if (isUniqueViolation(error, ['email_address']))
      throw new ConflictError(`The address ${emailAddress} is taken`, { email_address: emailAddress });
    // The organization was deleted since it was found.
    if (isForeignKeyViolation(error)) throw organizationNotFound(organizationId);
    throw error;
  }
}

/**
 * The inbox, or 404. Ids that are not UUIDs cannot exist and are not found either, nor can an
 * inbox being deleted, or one outside the scope.
 */
export async function findInbox(db: Database, scope: Scope, inboxId: string): Promise<Inbox> {
  const inbox = isUuid(inboxId) ? await db.inbox.findFirst({ where: { id: inboxId, deletedAt: null } }) : null;
  if (!inbox || !canReachInbox(scope, inbox)) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  return inbox;
}

/** Changes an inbox's name or settings (the inbox within the scope: 404 otherwise). */
export async function updateInbox(db: Database, scope: Scope, inboxId: string, input: UpdateInboxInput): Promise<InboxResponse> {
  const inbox = await findInbox(db, scope, inboxId);
  const data = {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.sending_enabled !== undefined && { sendingEnabled: input.sending_enabled }),
    ...(input.send_policy !== undefined && { sendPolicy: input.send_policy }),
  };
  const [updated] = await db.inbox.updateManyAndReturn({ where: { id: inbox.id, deletedAt: null }, data });
  if (!updated) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  return toInboxResponse(updated);
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

/** The inboxes within the scope, newest first. */
export async function listInboxes(
  db: Database,
  scope: Scope,
  options: { limit: number; offset: number; page_token?: string },
): Promise<Page<InboxResponse>> {
  const where = { deletedAt: null, ...inboxFilter(scope) };
  const { rows, total, next } = await readPage(
    options,
    'inboxes',
    NEWEST_FIRST,
    (after, take, skip) =>
      db.inbox.findMany({ where: { AND: [where, after] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.inbox.count({ where }),
  );
  return page(rows.map(toInboxResponse), total, next);
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
export async function deleteInbox(
  deps: InboxRemoval,
  scope: Scope,
  inboxId: string,
  options: { waitSeconds: number },
): Promise<void> {
  await findInbox(deps.db, scope, inboxId);
  const { count } = await deps.db.inbox.updateMany({ where: { id: inboxId, deletedAt: null }, data: { deletedAt: new Date() } });
  if (count === 0) throw new NotFoundError('Inbox not found', { inbox_id: inboxId });
  deps.crashPoint('inbox-delete:marked');
  await waitForSends(deps.db, { inboxId }, options.waitSeconds);
  await removeInbox(deps, inboxId);
}

/**
 * The removal proper of an inbox marked deleted: its files, its events (which carry its messages,
 * and have no key to cascade from: the log takes no lock on inboxes), then its rows (which
 * cascade). A crash before the last step leaves the mark, and the reconciler does it all again.
 */
export async function removeInbox(deps: InboxRemoval, inboxId: string): Promise<void> {
  await deps.storage.deletePrefix(attachmentPrefix(inboxId));
  deps.crashPoint('inbox-delete:files-removed');
  await removeInboxEvents(deps.db, inboxId);
  await deps.db.inbox.deleteMany({ where: { id: inboxId, deletedAt: { not: null } } });
  // Events appended meanwhile (a delivery status of its sent mail); none can come once its messages are gone.
  await removeInboxEvents(deps.db, inboxId);
}

export function attachmentPrefix(inboxId: string): string {
  return `inboxes/${inboxId}/`;
}
