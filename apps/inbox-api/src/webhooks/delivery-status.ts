import { z } from 'zod';
import { type Database, prismaStatements } from '../database.js';
import { appendEvents, type EventType, type NewEvent } from '../events/log.js';
import type { DeliveryStatus } from '../generated/prisma/client.js';
import { messageEvent } from '../messages/events.js';
import { prefixOf } from '../shared/text.js';
import type { ReplayToken } from './replay.js';

/*
 * Delivery status from the providers: what SES (bounce, complaint and delivery notifications
 * through SNS), Mailgun (event webhooks) and SendGrid (Event Webhook) tell about mail we sent.
 * Each provider module (providers/*-events.ts) turns its payload into DeliveryEvents; this module
 * finds the messages by the provider's id (messages.transport_message_id, recorded when the send
 * completed, outbox.ts), moves their delivery_status forward (nextDeliveryStatus) and appends
 * the event, in one transaction.
 */

export type { DeliveryStatus } from '../generated/prisma/client.js';
export type EventProvider = 'ses' | 'mailgun' | 'sendgrid';
/** What a provider's event can make of a message (never back to `sent`). */
export type ReportedStatus = Exclude<DeliveryStatus, 'sent'>;

/** `delivery_detail` of a message, as the API shows it: the delivery event last applied (or the send). */
export type DeliveryDetail = {
  /** The transport: local, smtp, mailgun, sendgrid or ses. */
  provider: string;
  /** The provider's own name of the event (SES `Bounce`, Mailgun `failed`, SendGrid `spamreport`), or `send`. */
  event: string;
  /** The recipient the event is about, when the provider names one. */
  recipient: string | null;
  /** The provider's reason or diagnostic (an SMTP reply, a bounce type), when it gives one. */
  reason: string | null;
  /** When the provider says the event happened (ISO 8601). */
  timestamp: string;
};

/** One provider event about one sent message, as the provider modules parse it. */
export interface DeliveryEvent {
  provider: EventProvider;
  /**
   * The provider's ids the message may have been recorded under (transport_message_id), the
   * likeliest first: the first that names a message we sent is the one. One for SES and Mailgun;
   * SendGrid's sg_message_id gives several (providers/sendgrid-events.ts).
   */
  transportMessageIds: readonly string[];
  status: ReportedStatus;
  detail: DeliveryDetail;
}

/**
 * How bad each status is. A provider's event moves a message only to a worse status, so that
 * events arriving late, twice or out of order (SES and SendGrid promise no order; all three
 * retry) never undo what is known:
 * - `sent` (the provider took it) < `delivered` (a recipient's server accepted it);
 * - `bounced` and `failed` (the provider gave up or dropped it) rank alike above `delivered`: a
 *   server may accept mail and bounce it later (SES says so), and with several recipients one may
 *   get it while another bounces; whichever of the two comes first stays;
 * - `complained` ranks highest: a recipient got it and marked it as spam, which the sender must
 *   act on whatever happened to the other recipients.
 * An event of the status the message already has changes nothing (no second event).
 */
const RANK: Record<DeliveryStatus, number> = { sent: 0, delivered: 1, bounced: 2, failed: 2, complained: 3 };

/**
 * The status a message moves to on a provider's event, or undefined when it stays as it is:
 * a message not yet handed to the provider (null: still sending, or inbound) is not moved, and
 * no status is ever moved to a better or equal one. Pure.
 */
export function nextDeliveryStatus(current: DeliveryStatus | null, reported: ReportedStatus): DeliveryStatus | undefined {
  if (current === null) return undefined;
  return RANK[reported] > RANK[current] ? reported : undefined;
}

const EVENT_OF: Record<ReportedStatus, EventType> = {
  delivered: 'message.delivered',
  bounced: 'message.bounced',
  complained: 'message.complained',
  failed: 'message.failed',
};

/** What a batch of events did: how many named a message we sent, and which messages changed. */
export interface AppliedEvents {
  received: number;
  matched: number;
  updated: string[];
}

const TRANSPORT_ID = /^[\x21-\x7e]{1,998}$/;

/** Events of one request at most; a provider's batch is far smaller (SendGrid: about 1,000 events or 768 KB). */
export const MAX_EVENTS = 5000;

/**
 * Applies a provider's events to the outbound messages they name, in one transaction: the
 * messages' rows are locked (in id order, so that two batches cannot deadlock), each event moves
 * its message forward (nextDeliveryStatus) in the order given, and one event is appended per
 * change, last. Events naming no message we sent with that provider (another account's mail, a
 * message deleted since, mail sent before ids were recorded) change nothing: the provider is
 * answered 2xx all the same, or it would retry them for days. A Mailgun request's `replayToken` is
 * recorded first in the same transaction, without ON CONFLICT: of two requests with one token
 * (Mailgun signs the token, not the body), the second fails on its key (refusingReplays answers 401),
 * whatever their timing, and a request that fails leaves its token unused.
 */
export async function applyDeliveryEvents(
  db: Database,
  events: DeliveryEvent[],
  replayToken?: ReplayToken,
): Promise<AppliedEvents> {
  if (events.length === 0 && !replayToken) return { received: 0, matched: 0, updated: [] };
  const provider = events[0]?.provider;
  // Ids the transports record are printable ASCII; anything else names no message (and NUL would not reach Postgres).
  const ids = [...new Set(events.flatMap((event) => event.transportMessageIds))].filter((id) => TRANSPORT_ID.test(id));
  return db.$transaction(
    async (tx) => {
      if (replayToken) {
        await tx.$executeRaw`
          INSERT INTO webhook_tokens (token, expires_at) VALUES (${replayToken.token}, ${replayToken.expiresAt}::timestamptz)`;
      }
      if (events.length === 0) return { received: 0, matched: 0, updated: [] };
      const rows = await tx.$queryRaw<{ id: string; transport_message_id: string; delivery_status: DeliveryStatus | null }[]>`
        SELECT id, transport_message_id, delivery_status::text AS delivery_status
          FROM messages
         WHERE transport_message_id IN (SELECT json_array_elements_text(${JSON.stringify(ids)}::json))
           AND direction = 'outbound'
           AND metadata->'delivery'->>'provider' = ${provider}
           -- A message of an inbox being deleted is gone for the API: its events change nothing.
           AND inbox_id IN (SELECT id FROM inboxes WHERE deleted_at IS NULL)
         ORDER BY id
           FOR UPDATE OF messages`;
      const byTransportId = new Map<string, { id: string; status: DeliveryStatus | null }[]>();
      for (const row of rows) {
        const list = byTransportId.get(row.transport_message_id) ?? [];
        list.push({ id: row.id, status: row.delivery_status });
        byTransportId.set(row.transport_message_id, list);
      }
      const changes = new Map<string, { status: DeliveryStatus; detail: DeliveryDetail; events: EventType[] }>();
      let matched = 0;
      for (const event of events) {
        const messages = event.transportMessageIds.map((id) => byTransportId.get(id)).find((found) => found !== undefined) ?? [];
        if (messages.length > 0) matched += 1;
        for (const message of messages) {
          const next = nextDeliveryStatus(message.status, event.status);
          if (!next) continue;
          message.status = next;
          const change = changes.get(message.id) ?? { status: next, detail: event.detail, events: [] };
          change.status = next;
          change.detail = event.detail;
          change.events.push(EVENT_OF[event.status]);
          changes.set(message.id, change);
        }
      }
      if (changes.size === 0) return { received: events.length, matched, updated: [] };
      // One statement for the whole batch (SendGrid posts thousands of events at once): one update a
      // message took seconds, past the transaction's time.
      const updates = [...changes].map(([id, change]) => ({ id, status: change.status, detail: change.detail }));
      await tx.$executeRaw`
        UPDATE messages m SET delivery_status = c.status::"DeliveryStatus", delivery_detail = c.detail
          FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS c(id uuid, status text, detail jsonb)
         WHERE m.id = c.id`;
      const updated = await tx.message.findMany({
        where: { id: { in: [...changes.keys()] } },
        include: { inbox: { select: { organizationId: true } } },
        orderBy: { id: 'asc' },
      });
      const appended: NewEvent[] = [];
      for (const { inbox, ...record } of updated) {
        // Each step is reported (delivered, then bounced), each carrying the message as it ends up.
        for (const type of changes.get(record.id)!.events) appended.push(messageEvent(type, inbox, record));
      }
      await appendEvents(prismaStatements(tx), appended);
      return { received: events.length, matched, updated: [...changes.keys()] };
    },
    // A batch of MAX_EVENTS locks and updates that many messages: more than Prisma's default 5 s on a busy database.
    { timeout: 60_000 },
  );
}

/*
 * Fields of the providers' events that only describe (a reply, a recipient, a time): read leniently,
 * so that one odd value (null, a number as text) does not refuse an event, or a batch of them, that
 * the provider would then retry for days.
 */

/** A number, or one written as text (`"550"`); absent for anything else. */
export const lenientNumber = z
  .unknown()
  .transform((value) => {
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && /^\d{1,15}(\.\d{1,9})?$/.test(value.trim())) return Number(value);
    return undefined;
  })
  .optional();

/** Text; absent for anything else (null, a number). */
export const lenientText = z
  .unknown()
  .transform((value) => (typeof value === 'string' ? value : undefined))
  .optional();

/** A provider's time (Unix seconds, possibly fractional, or text) as ISO 8601; now when it has none that parses. */
export function isoTime(value: number | string | undefined, now = new Date()): string {
  const time =
    typeof value === 'number' ? value * 1000 : typeof value === 'string' && value !== '' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(time) && new Date(time).getFullYear() > 1970 ? new Date(time).toISOString() : now.toISOString();
}

const CONTROL = /\p{Cc}/u;

/** Text from a provider, cut to a length that fits a detail (SMTP replies may be long). */
export function shortText(value: unknown, max = 1000): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  // Control characters (NUL among them, which Postgres text refuses) and lone surrogates go: each
  // run of white space and controls that holds a control becomes one space. Runs are matched whole
  // (no backtracking): `\s*\p{Cc}` retried every start of 60,000 spaces, five seconds of the event loop.
  const text = String(value)
    .toWellFormed()
    .replace(/[\s\p{Cc}]+/gu, (run) => (CONTROL.test(run) ? ' ' : run))
    .trim();
  return text === '' ? null : prefixOf(text, max);
}
