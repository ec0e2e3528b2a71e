import type { Database, Statements } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import { jsonbText } from '../shared/text.js';

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.bounced',
  'message.complained',
  'message.failed',
  'message.blocked',
  'thread.summarized',
  'draft.created',
  'draft.pending_approval',
  'draft.approved',
  'draft.rejected',
  'draft.scheduled',
  'draft.sent',
  'draft.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The channel every append notifies at commit: one LISTEN per process hears them all (listener.ts). */
export const EVENTS_CHANNEL = 'inbox_events';

/**
 * Taken by every append until its transaction ends. A bigserial id is drawn when the row is
 * written, not when it commits: without this lock, a transaction drawing id 7 could commit after
 * one that drew 8, and a reader that had already moved its cursor past 8 would never see 7. Under
 * the lock, the next append draws its id only after the previous one has committed (or rolled
 * back), so ids are in commit order and a cursor never skips an event that commits later. The
 * lock serialises only the last statement of each writing transaction and its commit (appendEvent
 * must come last, so that no transaction waits for a row while holding it: no deadlock); the
 * alternative, filtering readers by pg_snapshot_xmin, would let any long transaction in the
 * cluster (other databases included) hold every reader back.
 */
const APPEND_LOCK_KEY = 0x1b0e7e47;

/** One event to append: what changed, where, and the record as the API shows it. */
export interface NewEvent {
  type: EventType;
  organizationId: string;
  inboxId: string;
  threadId: string | null;
  messageId: string | null;
  data: Record<string, unknown>;
}

/** What NOTIFY carries: enough for a process to tell which waiters may be interested (no data). */
export interface EventSignal {
  id: string;
  type: EventType;
  organization_id: string;
  inbox_id: string;
  thread_id: string | null;
}

/**
 * Appends events in the caller's transaction (or alone, as a statement that commits on its own),
 * and notifies waiters on every replica when it commits. Must be the transaction's last
 * statement: it holds the append lock until the commit. Returns the events' ids.
 */
export async function appendEvents(statements: Statements, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const appended = await statements.query<{ id: string }>(Prisma.sql`
    WITH ${appendEventsCtes(events)}
    SELECT id FROM notified ORDER BY id::bigint`);
  return appended.map((row) => row.id);
}

/**
 * The append as common table expressions (`locked`, `appended`, `notified`: the ids, as text),
 * for a statement that writes the change and its events in one round trip (records.ts). `after`
 * is the FROM clause of the lock: the lock is taken once for each of its rows, that is, only when
 * the change wrote its row, and only after the change's own row locks (so that no statement
 * waits for a row while it holds the lock). `dataFrom`, a jsonb expression, is merged into each
 * event's data: fields the statement itself writes, which need not be sent twice. The statement
 * must read `notified` whole, or the NOTIFY is not sent, and must be its transaction's last.
 */
export function appendEventsCtes(
  events: NewEvent[],
  { after = Prisma.empty, dataFrom }: { after?: Prisma.Sql; dataFrom?: Prisma.Sql } = {},
): Prisma.Sql {
  const rows = jsonbText(
    events.map((event) => [event.type, event.organizationId, event.inboxId, event.threadId, event.messageId, event.data]),
  );
  // The ids are drawn (by the column's default) only once the lock is held: the rows come from `locked`.
  // created_at is the moment of the append, under the lock, just before the commit (not the
  // transaction's start): it follows id order, and tells how long the event took to reach a reader.
  return Prisma.sql`locked AS (
      SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY}::bigint) ${after}
    ), appended AS (
      INSERT INTO events (type, organization_id, inbox_id, thread_id, message_id, data, created_at)
      SELECT event->>0, event->>1, (event->>2)::uuid, (event->>3)::uuid, (event->>4)::uuid,
             event->5${dataFrom ? Prisma.sql` || ${dataFrom}` : Prisma.empty}, clock_timestamp()
        FROM locked, jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS e(event, n)
       ORDER BY n
      RETURNING id, type, organization_id, inbox_id, thread_id
    ), notified AS (
      -- pg_notify returns void, which Prisma cannot read: called in a lateral subquery, its result not selected.
      SELECT appended.id::text AS id
        FROM appended, LATERAL (SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object(
               'id', id::text, 'type', type, 'organization_id', organization_id, 'inbox_id', inbox_id,
               'thread_id', thread_id)::text)) AS notified
    )`;
}

/**
 * Removes events older than `retentionDays`, and raises the horizon (event_horizon) to the newest
 * id removed, in the same statement: a cursor at or below it is then known to be expired (410),
 * whatever else was removed around it.
 */
export function removeExpiredEvents(db: Database, retentionDays: number): Promise<number> {
  return removeEvents(db, Prisma.sql`created_at < now() - make_interval(days => ${retentionDays})`, { raiseHorizon: true });
}

/** Removes the events of an inbox being deleted: they carry its messages (inboxes/service.ts). */
export function removeInboxEvents(db: Database, inboxId: string): Promise<number> {
  return removeEvents(db, Prisma.sql`inbox_id = ${inboxId}::uuid`, { raiseHorizon: false });
}

/** Removes the events `where` selects, a batch at a time (a long delete would hold back appends' vacuum). */
async function removeEvents(db: Database, where: Prisma.Sql, { raiseHorizon }: { raiseHorizon: boolean }): Promise<number> {
  const horizon = raiseHorizon
    ? Prisma.sql`, horizon AS (
        INSERT INTO event_horizon (id, removed_through) SELECT 1, max(id) FROM removed HAVING count(*) > 0
        ON CONFLICT (id) DO UPDATE SET removed_through = greatest(event_horizon.removed_through, excluded.removed_through)
      )`
    : Prisma.empty;
  let removed = 0;
  for (;;) {
    const [{ count }] = await db.$queryRaw<[{ count: number }]>`
      WITH removed AS (
        DELETE FROM events WHERE id IN (SELECT id FROM events WHERE ${where} ORDER BY id LIMIT 5000) RETURNING id
      )${horizon}
      SELECT count(*)::int AS count FROM removed`;
    removed += count;
    if (count < 5000) return removed;
  }
}
