/**
 * The fan-out: events become deliveries. A cursor (webhook_dispatch, one row) follows the event
 * log; each round takes the events after it, writes one delivery per matching webhook, moves the
 * cursor and queues the webhooks' delivery jobs, all in one transaction. So an event gets exactly
 * one delivery per matching webhook whatever crashes: either the round committed (deliveries,
 * cursor and jobs together) or it did not (and the next round does it). Rounds of several
 * processes take turns on the cursor's row lock. Event ids are in commit order (events/log.ts),
 * so a commit after the round cannot bring an id below the cursor.
 *
 * Each process runs rounds when a commit of an event is announced (the events LISTEN, so on any
 * replica) and every INBOX_WEBHOOK_SWEEP_SECONDS as a backstop; the same sweep queues the jobs of
 * webhooks whose retries have come due (deliver.ts).
 */
import type { CrashPoint } from '@repo/config';
import type { Logger } from '@repo/http';
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Database } from '../database.js';
import type { EventListener } from '../events/listener.js';
import type { JobQueue } from '../jobs/queue.js';

/** Events taken by one round. */
const ROUND_EVENTS = 1000;

export interface DispatchDeps {
  db: Database;
  jobs: JobQueue;
  crashPoint: CrashPoint;
}

/** Runs rounds until the cursor reaches the end of the log; returns the deliveries written. */
export async function dispatchEvents(deps: DispatchDeps): Promise<number> {
  let written = 0;
  for (;;) {
    const round = await deps.db.$transaction(async (tx) => {
      const [cursor] = await tx.$queryRaw<{ last: bigint }[]>`
        SELECT last_event_id AS last FROM webhook_dispatch WHERE id = 1 FOR UPDATE`;
      const after = cursor?.last ?? 0n;
      const [range] = await tx.$queryRaw<{ upto: bigint | null; count: number }[]>`
        SELECT MAX(id) AS upto, COUNT(*)::int AS count
          FROM (SELECT id FROM events WHERE id > ${after} ORDER BY id LIMIT ${ROUND_EVENTS}) AS next`;
      if (!range?.upto) return { events: 0, deliveries: 0, webhookIds: [] as string[] };
      const inserted = await tx.$queryRaw<{ webhook_id: string }[]>`
        INSERT INTO webhook_deliveries (id, webhook_id, event_id, next_attempt_at)
        SELECT gen_random_uuid(), w.id, e.id, now()
          FROM events e
          JOIN webhooks w
            ON w.organization_id = e.organization_id
           AND w.enabled
           AND e.id > w.after_event_id
           AND e.type = ANY (w.event_types)
           AND (cardinality(w.inbox_ids) = 0 OR e.inbox_id = ANY (w.inbox_ids))
         WHERE e.id > ${after} AND e.id <= ${range.upto}
         ORDER BY e.id
        ON CONFLICT (webhook_id, event_id) DO NOTHING
        RETURNING webhook_id::text`;
      if (cursor) {
        await tx.$executeRaw`UPDATE webhook_dispatch SET last_event_id = ${range.upto}, updated_at = now() WHERE id = 1`;
      } else {
        await tx.$executeRaw`INSERT INTO webhook_dispatch (id, last_event_id) VALUES (1, ${range.upto}) ON CONFLICT (id) DO NOTHING`;
      }
      const webhookIds = [...new Set(inserted.map((row) => row.webhook_id))];
      // With the deliveries: a job per webhook (one waits at most: its key), which takes every due delivery.
      for (const webhookId of webhookIds)
        await deps.jobs.send('deliver-webhook', { webhook_id: webhookId }, { tx, key: webhookId });
      return { events: range.count, deliveries: inserted.length, webhookIds };
    });
    // Crash tests stop here: deliveries committed, none attempted yet.
    if (round.deliveries > 0) deps.crashPoint('webhook-dispatch:committed');
    if (round.webhookIds.length > 0) deps.jobs.wake('deliver-webhook');
    written += round.deliveries;
    if (round.events < ROUND_EVENTS) return written;
  }
}

/** Queues the delivery job of every webhook with a delivery due (retries, leases of attempts cut short). */
export async function queueDueDeliveries(deps: Pick<DispatchDeps, 'db' | 'jobs'>): Promise<number> {
  const due = await deps.db.$queryRaw<{ webhook_id: string }[]>`
    SELECT DISTINCT d.webhook_id::text AS webhook_id
      FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (w.enabled OR d.manual)
     LIMIT 1000`;
  for (const { webhook_id: webhookId } of due) {
    await deps.jobs.send('deliver-webhook', { webhook_id: webhookId }, { key: webhookId });
  }
  if (due.length > 0) deps.jobs.wake('deliver-webhook');
  return due.length;
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

/** Runs the fan-out in this process: at each event commit announced, and with the sweep every `sweepSeconds`. */
export function startWebhookDispatcher(
  deps: DispatchDeps & { events: EventListener; logger: Logger },
  options: { sweepSeconds: number },
): WebhookDispatcher {
  const stopping = new AbortController();
  const subscription = deps.events.subscribe(() => true);
  const onError = (error: unknown) => deps.logger.error({ err: error }, 'webhooks: the fan-out of events failed; trying again');
  const loop = (async () => {
    await subscription.ready;
    while (!stopping.signal.aborted) {
      await dispatchEvents(deps).catch(onError);
      await subscription.next({ timeoutMs: options.sweepSeconds * 1000, abort: stopping.signal });
    }
  })();
  const sweep: Periodic = startPeriodic(
    async () => {
      await queueDueDeliveries(deps);
    },
    { intervalSeconds: options.sweepSeconds, onError, startAfterInterval: true },
  );
  return {
    async stop() {
      stopping.abort();
      subscription.close();
      await sweep.stop();
      await loop;
    },
  };
}
