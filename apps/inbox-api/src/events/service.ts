import { GoneError, NotFoundError, UnauthorizedError } from '@repo/errors';
import { KEY_REVOKED } from '../api-keys/directory.js';
import { canReachOrganization, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import type { Event, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { findThread } from '../threads/service.js';
import { type EventListener, readyWithin } from './listener.js';
import type { EventSignal, EventType } from './log.js';
import type { EventPage, EventResponse } from './schemas.js';

export interface EventDeps {
  db: Database;
  events: EventListener;
}

/** Which events a reader gets: those in its scope, narrowed by the filters it gave. */
export interface EventFilters {
  scope: Scope;
  types?: readonly EventType[];
  inboxId?: string;
  threadId?: string;
  /**
   * Events created before this are past INBOX_EVENT_RETENTION_DAYS: not listed, though the
   * reconciler may not have removed them yet. Events that commit while a reader waits are newer.
   */
  keptSince?: Date;
}

/** When the events still kept begin: INBOX_EVENT_RETENTION_DAYS before `now`. Pure. */
export function eventsKeptSince(retentionDays: number, now = new Date()): Date {
  return new Date(now.getTime() - retentionDays * 86_400_000);
}

/** The filters of a request, with its inbox and thread checked to be within the scope (404 otherwise). */
export async function eventFilters(
  db: Database,
  scope: Scope,
  query: { types?: EventType[]; inbox_id?: string; thread_id?: string },
  keptSince?: Date,
): Promise<EventFilters> {
  const inbox = query.inbox_id !== undefined ? await findInbox(db, scope, query.inbox_id) : undefined;
  const thread =
    query.thread_id !== undefined ? await findThread(db, scope, { threadId: query.thread_id, inboxId: inbox?.id }) : undefined;
  return { scope, types: query.types?.length ? query.types : undefined, inboxId: inbox?.id, threadId: thread?.id, keptSince };
}

/** Whether an event is one the reader gets. Pure: used on the rows' signals before any query, and on the rows the live feed reads. */
export function matchesFilters(
  filters: EventFilters,
  event: Pick<EventSignal, 'type' | 'organization_id' | 'inbox_id' | 'thread_id'>,
): boolean {
  const { scope } = filters;
  return (
    canReachOrganization(scope, event.organization_id) &&
    (scope.inboxIds === undefined || scope.inboxIds.includes(event.inbox_id)) &&
    (filters.types === undefined || filters.types.includes(event.type)) &&
    (filters.inboxId === undefined || filters.inboxId === event.inbox_id) &&
    (filters.threadId === undefined || filters.threadId === event.thread_id)
  );
}

/**
 * Checks a cursor: an event the scope reaches (another scope's is not found: 404, as if it did
 * not exist), or one removed after INBOX_EVENT_RETENTION_DAYS, or created before `keptSince` and
 * not removed yet (410: events after it may be gone too, so the reader must start again from
 * what it can still list). A gone id above the
 * retention's horizon was removed with its inbox (or never committed): the reader goes on after
 * it, as nothing it could have listed lies between (a reader's own cursor must survive the
 * deletion of the inbox its last event was in, even when that inbox held the oldest events). An
 * id never drawn is 404.
 */
export async function checkCursor(db: Database, scope: Scope, after: bigint, keptSince?: Date): Promise<void> {
  if (after === 0n) return;
  const event = await db.event.findUnique({
    where: { id: after },
    select: { organizationId: true, inboxId: true, createdAt: true },
  });
  if (event) {
    const reachable =
      canReachOrganization(scope, event.organizationId) &&
      (scope.inboxIds === undefined || scope.inboxIds.includes(event.inboxId));
    if (!reachable) throw cursorNotFound(after);
    if (keptSince && event.createdAt < keptSince) throw cursorGone(after);
    return;
  }
  // Read after the event: a retention that removed it has raised the horizon by then (one statement).
  const [ids] = await db.$queryRaw<[{ removedThrough: bigint | null; drawn: bigint }]>`
    SELECT (SELECT removed_through FROM event_horizon WHERE id = 1) AS "removedThrough",
           (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_id_seq) AS drawn`;
  if (after <= (ids.removedThrough ?? 0n)) throw cursorGone(after);
  if (after > ids.drawn) throw cursorNotFound(after);
}

const cursorNotFound = (after: bigint) => new NotFoundError('Event not found', { after: after.toString() });
const cursorGone = (after: bigint) =>
  new GoneError('This cursor is older than the events kept: list again without `after`', { after: after.toString() });

function whereOf(filters: EventFilters, after: bigint): Prisma.EventWhereInput {
  const { scope } = filters;
  return {
    id: { gt: after },
    ...(scope.organizationId !== undefined && { organizationId: scope.organizationId }),
    ...(scope.inboxIds !== undefined && { inboxId: { in: [...scope.inboxIds] } }),
    ...(filters.inboxId !== undefined && { inboxId: filters.inboxId }),
    ...(filters.threadId !== undefined && { threadId: filters.threadId }),
    ...(filters.types !== undefined && { type: { in: [...filters.types] } }),
    ...(filters.keptSince !== undefined && { createdAt: { gte: filters.keptSince } }),
  };
}

/** Events after the cursor that the reader gets, oldest first. */
export async function readEvents(db: Database, filters: EventFilters, after: bigint, limit: number): Promise<EventResponse[]> {
  const events = await db.event.findMany({ where: whereOf(filters, after), orderBy: { id: 'asc' }, take: limit });
  return events.map(toEventResponse);
}

export function toEventResponse(event: Event): EventResponse {
  return {
    id: Number(event.id),
    type: event.type as EventType,
    created_at: event.createdAt.toISOString(),
    organization_id: event.organizationId,
    inbox_id: event.inboxId,
    thread_id: event.threadId,
    message_id: event.messageId,
    data: event.data as Record<string, unknown>,
  };
}

/**
 * GET /v1/events: the events after `after`; with `wait`, when there are none yet, it waits for
 * the first commit that may match (woken by the process's one LISTEN: no query while idle) and
 * answers then, or empty when the time is up or the client went away. `stands` tells whether
 * the caller may still be answered after the wait (its key not revoked meanwhile): 401 otherwise.
 */
export async function listEvents(
  deps: EventDeps,
  filters: EventFilters,
  options: { after: bigint; limit: number; waitSeconds: number; abort: AbortSignal; stands: () => Promise<boolean> },
): Promise<EventPage> {
  const { after, limit } = options;
  const pageOf = (items: EventResponse[]): EventPage => ({ items, next_after: items.at(-1)?.id ?? Number(after) });
  if (options.waitSeconds === 0) return pageOf(await readEvents(deps.db, filters, after, limit));

  // Subscribed before the read: a commit the read's snapshot misses signals this waiter. One query
  // when events are there (or when none comes), one more per signal.
  const subscription = deps.events.subscribe((signal) => matchesFilters(filters, signal));
  try {
    const deadline = Date.now() + options.waitSeconds * 1000;
    // Not listening by the deadline (the LISTEN connection cannot be opened): what is there now.
    const listening = await readyWithin(subscription.ready, { timeoutMs: deadline - Date.now(), abort: options.abort });
    let items = await readEvents(deps.db, filters, after, limit);
    while (listening && items.length === 0 && !options.abort.aborted) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      if (!(await subscription.next({ timeoutMs: remaining, abort: options.abort }))) break;
      items = await readEvents(deps.db, filters, after, limit);
    }
    if (!(await options.stands())) throw new UnauthorizedError(KEY_REVOKED);
    return pageOf(items);
  } finally {
    subscription.close();
  }
}
