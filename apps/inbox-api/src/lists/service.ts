import { isForeignKeyViolation } from '@repo/db';
import { ConflictError, NotFoundError } from '@repo/errors';
import {
  canReachOrganization,
  inboxFilter,
  organizationNotFound,
  requireWholeOrganization,
  type Scope,
} from '../api-keys/scope.js';
import { type Database, pgStatements, preparedStatements } from '../database.js';
import { appendEvents } from '../events/log.js';
import { type ListEntry, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { findOrganization } from '../organizations/service.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import { type ListDirection, type ListRule, passesLists } from './rules.js';
import type { CreateListEntryInput, ListEntriesQuery, ListEntryResponse } from './schemas.js';

export function toListEntryResponse(entry: ListEntry): ListEntryResponse {
  return {
    id: entry.id,
    organization_id: entry.organizationId,
    inbox_id: entry.inboxId,
    direction: entry.direction,
    type: entry.type,
    entry: entry.entry,
    created_at: entry.createdAt.toISOString(),
  };
}

/**
 * Adds an entry to an inbox's list (the inbox within the scope: 404 otherwise) or to an
 * organization's (a key limited to some inboxes cannot: it reaches only some of the inboxes the
 * entry governs, 403). The same entry twice in one list is a 409.
 */
export async function createListEntry(db: Database, scope: Scope, input: CreateListEntryInput): Promise<ListEntryResponse> {
  let organizationId: string;
  let inboxId: string | null = null;
  if (input.inbox_id !== undefined) {
    const inbox = await findInbox(db, scope, input.inbox_id);
    organizationId = inbox.organizationId;
    inboxId = inbox.id;
  } else {
    organizationId = (await findOrganization(db, scope, input.organization_id!)).id;
    requireWholeOrganization(scope);
  }
  const where = { organizationId, inboxId, direction: input.direction, type: input.type, entry: input.entry };
  try {
    return await db.$transaction(async (tx) => {
      // One writer per list at a time, so that two equal entries cannot both pass the check.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`list:${organizationId}:${inboxId ?? ''}`}))`;
      const existing = await tx.listEntry.findFirst({ where, select: { id: true } });
      if (existing) throw new ConflictError('The list already has this entry', { entry_id: existing.id, entry: input.entry });
      return toListEntryResponse(await tx.listEntry.create({ data: where }));
    });
  } catch (error) {
    // The organization or inbox was deleted since it was found.
    if (isForeignKeyViolation(error)) {
      throw inboxId ? new NotFoundError('Inbox not found', { inbox_id: inboxId }) : organizationNotFound(organizationId);
    }
    throw error;
  }
}

/** Entries within the scope (an inbox-limited key: its inboxes' and its organization's own), newest first. */
export async function listListEntries(db: Database, scope: Scope, query: ListEntriesQuery): Promise<Page<ListEntryResponse>> {
  if (query.organization_id !== undefined) await findOrganization(db, scope, query.organization_id);
  if (query.inbox_id !== undefined) await findInbox(db, scope, query.inbox_id);
  const where: Prisma.ListEntryWhereInput = {
    ...reachableEntries(scope),
    ...(query.organization_id !== undefined && { organizationId: query.organization_id }),
    ...(query.inbox_id !== undefined && { inboxId: query.inbox_id }),
    ...(query.direction && { direction: query.direction }),
    ...(query.type && { type: query.type }),
  };
  const { rows, total, next } = await readPage(
    query,
    'lists',
    NEWEST_FIRST,
    (after, take, skip) =>
      db.listEntry.findMany({ where: { AND: [where, after] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.listEntry.count({ where }),
  );
  return page(rows.map(toListEntryResponse), total, next);
}

/** What a scope reaches: entries of its organization's level and of the live inboxes it reaches. */
function reachableEntries(scope: Scope): Prisma.ListEntryWhereInput {
  return {
    ...(scope.organizationId !== undefined && { organizationId: scope.organizationId }),
    OR: [{ inboxId: null }, { inbox: { deletedAt: null, ...inboxFilter(scope) } }],
  };
}

/** Removes an entry: 404 out of scope; 403 for an organization's entry and a key limited to some inboxes. */
export async function deleteListEntry(db: Database, scope: Scope, entryId: string): Promise<void> {
  const entry = isUuid(entryId) ? await db.listEntry.findFirst({ where: { id: entryId, ...reachableEntries(scope) } }) : null;
  if (!entry || !canReachOrganization(scope, entry.organizationId)) {
    throw new NotFoundError('List entry not found', { entry_id: entryId });
  }
  if (entry.inboxId === null) requireWholeOrganization(scope);
  await db.listEntry.deleteMany({ where: { id: entry.id } });
}

/** The rules that govern `direction` for an inbox: its organization's and its own. */
export async function listRulesFor(
  db: Database,
  inbox: { id: string; organizationId: string },
  direction: ListDirection,
): Promise<ListRule[]> {
  const rows = await pgStatements(db.pool).query<{ inbox_id: string | null; type: 'allow' | 'block'; entry: string }>(Prisma.sql`
    SELECT inbox_id, type::text AS type, entry FROM list_entries
     WHERE direction = ${direction}::"ListDirection"
       AND (inbox_id = ${inbox.id}::uuid OR (inbox_id IS NULL AND organization_id = ${inbox.organizationId}))`);
  return rows.map((row) => ({ level: row.inbox_id === null ? 'organization' : 'inbox', type: row.type, entry: row.entry }));
}

/**
 * Inbound mail's check, for every inbox it is for, on the rules read with the inbox
 * (messages/receive.ts, recipientsAt): the ids of the inboxes whose receive lists refuse `from`.
 * Each gets a `message.blocked` event (sender and subject), and nothing of the mail is stored for it.
 */
export async function refuseBlockedSender(
  db: Database,
  inboxes: readonly { id: string; organizationId: string; receiveRules: readonly ListRule[] }[],
  mail: { from: string; subject: string },
): Promise<Set<string>> {
  const blocked = inboxes.filter((inbox) => !passesLists(mail.from, inbox.receiveRules));
  if (blocked.length > 0) {
    await appendEvents(
      preparedStatements(db.pool),
      blocked.map((inbox) => ({
        type: 'message.blocked',
        organizationId: inbox.organizationId,
        inboxId: inbox.id,
        threadId: null,
        messageId: null,
        data: { direction: 'inbound', from: mail.from.toLowerCase(), subject: mail.subject },
      })),
    );
  }
  return new Set(blocked.map((inbox) => inbox.id));
}
