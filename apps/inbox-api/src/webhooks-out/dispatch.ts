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
 * event committed meanwhile; rounds start at most every ROUND_SPACING_MS) and every INBOX_WEBHOOK_SWEEP_SECONDS as a backstop. A round leases
 * the deliveries it writes to its own process (their due time is the end of a claim's lease) and
 * returns them with their webhooks and events: the process attempts them at once
 * (createLocalDelivery), with no claim, job or queue in between, and records the outcomes of
 * many attempts in one statement. The deliveries are rows before any attempt, so a crash loses
 * none: once the lease ends, the sweep (every INBOX_WEBHOOK_SWEEP_SECONDS in every process) queues
 * the `deliver-webhook` job of any webhook with a delivery due (those a process left unattempted or
 * unrecorded, retries), whose claim (deliver.ts) takes them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrashPoint } from '@repo/config';
import type { Logger } from '@repo/http';
import { type Periodic, startPeriodic } from '@repo/jobs';
import { type Database, preparedStatements } from '../database.js';
import { Prisma } from '../generated/prisma/client.js';
import type { EventListener } from '../events/listener.js';
import type { JobQueue } from '../jobs/queue.js';
import {
  type Attempted,
  attemptClaimed,
  type Claimed,
  claimedColumns,
  claimedOf,
  type ClaimedRow,
  type DeliveryDeps,
  leaseSeconds,
  recordOutcomes,
  type WebhookClient,
} from './deliver.js';

/** Events taken by one round. */
const ROUND_EVENTS = 1000;
/**
 * Rounds start at most this often. Under load an event commits every millisecond or two, and a
 * round per commit is a statement and a commit per event; spaced, a round takes what came meanwhile.
 * It delays a delivery by half of it on average (bench:webhooks: 25 ms took a tenth off Postgres's
 * CPU per delivery against 10 ms, for 10 ms more at p50).
 */
const ROUND_SPACING_MS = 25;

export interface DispatchDeps {
  db: Database;
  jobs: JobQueue;
  webhookClient: WebhookClient;
  crashPoint: CrashPoint;
}

/**
 * Runs rounds until the cursor reaches the end of the log; returns the deliveries written. `onCommitted`
 * gets (and must attempt), after each round's commit, the deliveries it wrote, leased to this process until `leaseEnds`
 * (a time of Date.now(), taken before the round: the database's lease ends later).
 */
export async function dispatchEvents(
  deps: DispatchDeps,
  onCommitted: (deliveries: Claimed[], leaseEnds: number) => void,
): Promise<number> {
  let written = 0;
  const lease = leaseSeconds(deps.webhookClient);
  for (;;) {
    const leaseEnds = Date.now() + lease * 1000;
    const rows = await preparedStatements(deps.db.pool).query<{ events: number } & ClaimedRow>(roundStatement(lease));
    const deliveries = rows.filter((row) => row.id !== null).map(claimedOf);
    if (deliveries.length > 0) {
      // Crash tests stop here: deliveries committed, none attempted yet.
      deps.crashPoint('webhook-dispatch:committed');
      onCommitted(deliveries, leaseEnds);
    }
    written += deliveries.length;
    if (rows[0]!.events < ROUND_EVENTS) return written;
  }
}

/**
 * One round as one statement (one round trip, committing on its own): lock the cursor, take the
 * events after it, write their deliveries, move the cursor. The events are read in the statement's
 * snapshot, which may be older than the cursor's row once its lock is granted (another round
 * committed meanwhile), but ids are in commit order: what the snapshot misses lies after every id
 * it sees, so the next round takes it. The cursor's row is written by the first round (upsert:
 * two first rounds at once write deliveries that the unique (webhook_id, event_id) keeps single).
 * While no webhook is enabled a round writes nothing, not even the cursor's lock (ingestion without
 * webhooks pays a read, no commit): the cursor stays behind, and the first webhook created or enabled
 * then starts it at its own start (after_event_id, the log's end at that time), so nothing is read twice.
 * The deliveries are written leased for `lease` seconds and returned as the claim returns them, one
 * row each (or one row of nulls), each row with the round's count of events. Prepared once per
 * connection: under load a round runs at nearly every commit, and Postgres would otherwise parse
 * and plan it each time.
 */
const roundStatement = (lease: number) => Prisma.sql`
  WITH cursor AS MATERIALIZED (
    SELECT last_event_id FROM webhook_dispatch WHERE id = 1 AND EXISTS (SELECT 1 FROM webhooks WHERE enabled) FOR UPDATE
  ), next AS MATERIALIZED (
    SELECT id, type, organization_id, inbox_id FROM events
     WHERE EXISTS (SELECT 1 FROM webhooks WHERE enabled)
       AND id > GREATEST(COALESCE((SELECT last_event_id FROM cursor), 0), (SELECT MIN(after_event_id) FROM webhooks WHERE enabled))
     ORDER BY id
     LIMIT ${ROUND_EVENTS}
  ), inserted AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, inbox_id, next_attempt_at, attempt_started_at)
    SELECT gen_random_uuid(), w.id, e.id, e.inbox_id, now() + make_interval(secs => ${lease}), now()
      FROM next e
      JOIN webhooks w
        ON w.organization_id = e.organization_id
       AND w.enabled
       AND e.id > w.after_event_id
       AND e.type = ANY (w.event_types)
       AND (cardinality(w.inbox_ids) = 0 OR e.inbox_id = ANY (w.inbox_ids))
     ORDER BY e.id
    ON CONFLICT (webhook_id, event_id) DO NOTHING
    RETURNING id, webhook_id, event_id, attempts, manual
  ), moved AS (
    INSERT INTO webhook_dispatch (id, last_event_id)
    SELECT 1, MAX(id) FROM next HAVING COUNT(*) > 0
    ON CONFLICT (id) DO UPDATE
       SET last_event_id = GREATEST(webhook_dispatch.last_event_id, EXCLUDED.last_event_id), updated_at = now()
  )
  SELECT (SELECT COUNT(*)::int FROM next) AS events, ${claimedColumns}
    FROM (SELECT 1) AS one
    LEFT JOIN inserted c ON true
    LEFT JOIN webhooks w ON w.id = c.webhook_id
    LEFT JOIN events e ON e.id = c.event_id
   ORDER BY c.event_id`;

/** Queues the delivery job of every webhook with a delivery due (retries, leases that ended without an attempt recorded). */
export async function queueDueDeliveries(deps: Pick<DispatchDeps, 'db' | 'jobs'>): Promise<number> {
  const due = await deps.db.$queryRaw<{ webhook_id: string }[]>`
    SELECT DISTINCT d.webhook_id::text AS webhook_id
      FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (w.enabled OR d.manual)
     LIMIT 1000`;
  for (const { webhook_id: webhookId } of due) {
    await deps.jobs.send('deliver-webhook', { webhook_id: webhookId }, { key: webhookId });
  }
  if (due.length > 0) deps.jobs.wake('deliver-webhook', due.length);
  return due.length;
}

/** Attempts in flight per webhook in one process (as many as the client's connections to one origin, four times). */
const LOCAL_IN_FLIGHT = 200;
/** Outcomes written by one statement at most. */
const RECORD_ROWS = 500;
/**
 * How long the first outcome waits for others to be written with it (under load, attempts end one
 * by one). It delays only the record, never a delivery: the lease is far longer.
 */
const RECORD_GATHER_MS = 100;

interface Waiting {
  delivery: Claimed;
  leaseEnds: number;
}

export interface LocalDelivery {
  /** A round committed these deliveries, leased to this process until `leaseEnds`: attempt them now. */
  attempt(deliveries: Claimed[], leaseEnds: number): void;
  /** Waits for the attempts in flight (each ends within the receiver timeout) and records them. */
  stop(): Promise<void>;
}

/**
 * Attempts the deliveries a round leased to this process, each as soon as it comes (up to
 * LOCAL_IN_FLIGHT per webhook, the rest wait their turn), and records their outcomes: one
 * statement at a time, each taking every outcome that came meanwhile, so that under load one
 * statement records many attempts. A delivery whose lease would end before its attempt could is
 * not attempted: the sweep takes it once the lease ends. A failure (the database) is left to the
 * sweep and the job likewise.
 */
export function createLocalDelivery(deps: Omit<DeliveryDeps, 'jobs'>, onError: (error: unknown) => void): LocalDelivery {
  const webhooks = new Map<string, { waiting: Waiting[]; inFlight: number }>();
  const attempts = new Set<Promise<void>>();
  const outcomes: Attempted[] = [];
  let recording: Promise<void> | undefined;
  let stopped = false;
  const timeoutMs = deps.webhookClient.timeoutSeconds * 1000;

  const record = () => {
    if (recording) return;
    recording = (async () => {
      await sleep(RECORD_GATHER_MS);
      while (outcomes.length > 0) await recordOutcomes(deps, outcomes.splice(0, RECORD_ROWS)).catch(onError);
    })().finally(() => {
      recording = undefined;
      // An outcome that came between the loop's end and here.
      if (outcomes.length > 0) record();
    });
  };

  const next = (webhookId: string) => {
    const state = webhooks.get(webhookId)!;
    while (!stopped && state.inFlight < LOCAL_IN_FLIGHT && state.waiting.length > 0) {
      const { delivery, leaseEnds } = state.waiting.shift()!;
      if (Date.now() + timeoutMs > leaseEnds) continue;
      state.inFlight++;
      const attempt: Promise<void> = attemptClaimed(deps.webhookClient, delivery).then((outcome) => {
        outcomes.push({ delivery, outcome });
        record();
        attempts.delete(attempt);
        state.inFlight--;
        next(webhookId);
      });
      attempts.add(attempt);
    }
    if (state.inFlight === 0 && state.waiting.length === 0) webhooks.delete(webhookId);
  };

  return {
    attempt(deliveries, leaseEnds) {
      if (stopped) return;
      for (const delivery of deliveries) {
        let state = webhooks.get(delivery.webhook_id);
        if (!state) webhooks.set(delivery.webhook_id, (state = { waiting: [], inFlight: 0 }));
        state.waiting.push({ delivery, leaseEnds });
      }
      for (const webhookId of new Set(deliveries.map((delivery) => delivery.webhook_id))) next(webhookId);
    },
    async stop() {
      stopped = true;
      await Promise.all([...attempts]);
      while (recording) await recording;
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
      const started = Date.now();
      await dispatchEvents(deps, (deliveries, leaseEnds) => local.attempt(deliveries, leaseEnds)).catch(onError);
      await subscription.next({ timeoutMs: options.sweepSeconds * 1000, abort: stopping.signal });
      const spacing = started + ROUND_SPACING_MS - Date.now();
      if (spacing > 0) await sleep(spacing, undefined, { signal: stopping.signal }).catch(() => undefined);
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
