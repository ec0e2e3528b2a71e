/**
 * The fan-out: events become deliveries. A cursor (webhook_dispatch, one row) follows the event
 * log; each round takes the events after it, writes one delivery per matching webhook and moves the
 * cursor, in one statement (one round trip). So an event gets exactly one delivery per matching
 * webhook whatever crashes: either the round committed (deliveries and cursor together) or it did
 * not (and the next round does it). Rounds of several processes take turns on the cursor's row lock. Event ids are in commit order (events/log.ts),
 * so a commit after the round cannot bring an id below the cursor.
 *
 * Each process runs rounds when a commit of an event is announced (the events LISTEN, so on any
 * replica; signals that arrive during a round are coalesced into the next one, which takes every
 * event committed meanwhile) and every INBOX_WEBHOOK_SWEEP_SECONDS as a backstop. Right after a
 * round commits, the process attempts the new deliveries itself (createLocalDelivery), without a
 * job queued and picked up in between: that is most of a delivery's latency saved. The deliveries
 * are rows before any attempt, so a crash loses none: the sweep, every INBOX_WEBHOOK_SWEEP_SECONDS
 * in every process, queues the `deliver-webhook` job of any webhook with a delivery due (new ones
 * not attempted, retries, leases of attempts cut short), and the claim (deliver.ts) keeps the job
 * and the in-process delivery from taking the same delivery.
 */
import type { CrashPoint } from '@repo/config';
import type { Logger } from '@repo/http';
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Database } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import type { EventListener } from '../events/listener.js';
import type { JobQueue } from '../jobs/queue.js';
import { type DeliveryDeps, deliverBatch } from './deliver.js';

/** Events taken by one round. */
const ROUND_EVENTS = 1000;

export interface DispatchDeps {
  db: Database;
  jobs: JobQueue;
  crashPoint: CrashPoint;
}

/**
 * Runs rounds until the cursor reaches the end of the log; returns the deliveries written. `onCommitted`
 * hears, after each round's commit, the webhooks that got deliveries in it.
 */
export async function dispatchEvents(deps: DispatchDeps, onCommitted?: (webhookIds: string[]) => void): Promise<number> {
  let written = 0;
  for (;;) {
    const [round] = await deps.db.$queryRaw<{ events: number; deliveries: number; webhook_ids: string[] }[]>(roundStatement);
    // Crash tests stop here: deliveries committed, none attempted yet.
    if (round!.deliveries > 0) deps.crashPoint('webhook-dispatch:committed');
    if (round!.webhook_ids.length > 0) onCommitted?.(round!.webhook_ids);
    written += round!.deliveries;
    if (round!.events < ROUND_EVENTS) return written;
  }
}

/**
 * One round as one statement (one round trip, committing on its own): lock the cursor, take the
 * events after it, write their deliveries, move the cursor. The events are read in the statement's
 * snapshot, which may be older than the cursor's row once its lock is granted (another round
 * committed meanwhile), but ids are in commit order: what the snapshot misses lies after every id
 * it sees, so the next round takes it. The cursor's row is written by the first round (upsert:
 * two first rounds at once write deliveries that the unique (webhook_id, event_id) keeps single).
 */
const roundStatement = Prisma.sql`
  WITH cursor AS MATERIALIZED (
    SELECT last_event_id FROM webhook_dispatch WHERE id = 1 FOR UPDATE
  ), next AS MATERIALIZED (
    SELECT id, type, organization_id, inbox_id FROM events
     WHERE id > COALESCE((SELECT last_event_id FROM cursor), 0)
     ORDER BY id
     LIMIT ${ROUND_EVENTS}
  ), inserted AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, next_attempt_at)
    SELECT gen_random_uuid(), w.id, e.id, now()
      FROM next e
      JOIN webhooks w
        ON w.organization_id = e.organization_id
       AND w.enabled
       AND e.id > w.after_event_id
       AND e.type = ANY (w.event_types)
       AND (cardinality(w.inbox_ids) = 0 OR e.inbox_id = ANY (w.inbox_ids))
     ORDER BY e.id
    ON CONFLICT (webhook_id, event_id) DO NOTHING
    RETURNING webhook_id
  ), moved AS (
    INSERT INTO webhook_dispatch (id, last_event_id)
    SELECT 1, MAX(id) FROM next HAVING COUNT(*) > 0
    ON CONFLICT (id) DO UPDATE
       SET last_event_id = GREATEST(webhook_dispatch.last_event_id, EXCLUDED.last_event_id), updated_at = now()
  )
  SELECT (SELECT COUNT(*)::int FROM next) AS events,
         (SELECT COUNT(*)::int FROM inserted) AS deliveries,
         ARRAY(SELECT DISTINCT webhook_id::text FROM inserted) AS webhook_ids`;

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

/** In-process attempts of one webhook's deliveries: runners at work, and whether a round committed more since a runner last looked. */
interface LocalRunners {
  running: number;
  more: boolean;
}

/** Runners per webhook in one process: a round's deliveries start at once while earlier batches are still in flight. */
const LOCAL_RUNNERS = 4;

export interface LocalDelivery {
  /** A round committed deliveries of these webhooks: attempt them now. */
  kick(webhookIds: string[]): void;
  /** Waits for the attempts in flight (each ends within the receiver timeout). */
  stop(): Promise<void>;
}

/**
 * Attempts new deliveries in this process as soon as their round commits. Each webhook has up to
 * LOCAL_RUNNERS runners; a runner claims and attempts batches (deliverBatch) until none is due and
 * no round committed more since its last claim began, so a kick that finds every runner busy is
 * never lost. A failure (the database) is left to the sweep and the job.
 */
export function createLocalDelivery(deps: Omit<DeliveryDeps, 'jobs'>, onError: (error: unknown) => void): LocalDelivery {
  const webhooks = new Map<string, LocalRunners>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  const run = async (webhookId: string, state: LocalRunners) => {
    try {
      while (!stopped) {
        state.more = false;
        const claimed = await deliverBatch(deps, webhookId);
        if (claimed === 0 && !state.more) return;
      }
    } finally {
      state.running--;
      if (state.running === 0) webhooks.delete(webhookId);
    }
  };

  return {
    kick(webhookIds) {
      if (stopped) return;
      for (const webhookId of webhookIds) {
        let state = webhooks.get(webhookId);
        if (!state) webhooks.set(webhookId, (state = { running: 0, more: false }));
        state.more = true;
        if (state.running >= LOCAL_RUNNERS) continue;
        state.running++;
        const runner: Promise<void> = run(webhookId, state)
          .catch(onError)
          .finally(() => inFlight.delete(runner));
        inFlight.add(runner);
      }
    },
    async stop() {
      stopped = true;
      await Promise.all([...inFlight]);
    },
  };
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

/** Runs the fan-out in this process: at each event commit announced, and with the sweep every `sweepSeconds`. */
export function startWebhookDispatcher(
  deps: DispatchDeps & Omit<DeliveryDeps, 'jobs'> & { events: EventListener; logger: Logger },
  options: { sweepSeconds: number },
): WebhookDispatcher {
  const stopping = new AbortController();
  const subscription = deps.events.subscribe(() => true);
  const onError = (error: unknown) => deps.logger.error({ err: error }, 'webhooks: the fan-out of events failed; trying again');
  const local = createLocalDelivery(deps, (error) =>
    deps.logger.error({ err: error }, 'webhooks: attempting deliveries failed; the sweep queues them again'),
  );
  const loop = (async () => {
    await subscription.ready;
    while (!stopping.signal.aborted) {
      await dispatchEvents(deps, (webhookIds) => local.kick(webhookIds)).catch(onError);
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
      await local.stop();
    },
  };
}
