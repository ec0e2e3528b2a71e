/**
 * The `deliver-webhook` job: attempts a webhook's due deliveries, a batch at a time. A batch is
 * claimed with FOR UPDATE SKIP LOCKED (two jobs of one webhook, on any replica, never take the same
 * delivery) by moving its due time past the attempt's end: that is the attempt's lease, so a
 * delivery whose process died mid-attempt comes due again by itself. Every attempt of a delivery
 * carries the same `webhook-id` (the delivery's id), a fresh timestamp and signature (sign.ts).
 * A 2xx within the timeout is delivered; anything else (another status, a redirect, which is
 * never followed, a timeout, a closed connection, an address refused) is a failed attempt, retried
 * after the next delay of INBOX_WEBHOOK_RETRY_SCHEDULE; when the schedule is spent the delivery
 * is failed and the webhook disabled with the reason.
 */
import type { Logger } from '@repo/http';
import { addressRefusal, createGuardedAgent, refusalMessage, type Resolve } from '@repo/net-guard';
import { type Agent, request } from 'undici';
import { type Database, preparedStatements } from '../database.js';
import { toEventResponse } from '../events/service.js';
import { type Event, Prisma } from '../generated/prisma/client.js';
import type { JobQueue } from '../jobs/queue.js';
import type { AttemptRecord } from './schemas.js';
import { signedHeaders, SigningKeys } from './sign.js';

/** Deliveries claimed (and attempted at once) by one batch. */
const BATCH = 50;
/** A job hands over to a fresh one after this long, so that one webhook's backlog does not hold a worker forever. */
const JOB_TURN_MS = 60_000;
/** Attempts kept in a delivery's attempt_log. */
const ATTEMPT_LOG_LENGTH = 20;

export interface WebhookClient {
  agent: Agent;
  timeoutSeconds: number;
  signingKeys: SigningKeys;
  close(): Promise<void>;
}

/** The HTTP client of deliveries: kept-alive connections, each to an address the net-guard rules allow. */
export function createWebhookClient(options: {
  allowPrivate: boolean;
  timeoutSeconds: number;
  resolve?: Resolve;
}): WebhookClient {
  const agent = createGuardedAgent({
    policy: { allowPrivate: options.allowPrivate },
    resolve: options.resolve,
    describe: (refusal, resolved) =>
      refusalMessage(
        resolved ? "The webhook's host resolves to" : "The webhook's host is",
        refusal,
        'which is not allowed',
        'INBOX_WEBHOOK_ALLOW_PRIVATE',
      ),
    agent: {
      keepAliveTimeout: 30_000,
      connections: BATCH,
      headersTimeout: options.timeoutSeconds * 1000,
      bodyTimeout: options.timeoutSeconds * 1000,
    },
  });
  return { agent, timeoutSeconds: options.timeoutSeconds, signingKeys: new SigningKeys(), close: () => agent.close() };
}

export interface DeliveryDeps {
  db: Database;
  jobs: JobQueue;
  logger: Logger;
  webhookClient: WebhookClient;
  config: { INBOX_WEBHOOK_RETRY_SCHEDULE: number[] };
}

/** What one attempt came to. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** A delivery's state after an attempt: delivered, due again after the schedule's next delay, or failed (schedule spent). */
export interface NextState {
  status: 'pending' | 'delivered' | 'failed';
  /** Seconds until the next attempt while pending. */
  retryInSeconds: number | null;
  /** The schedule is spent: the webhook is to be disabled. */
  exhausted: boolean;
}

/**
 * Pure: the state after attempt number `attempts` (from 1). Attempt n failing waits schedule[n-1]
 * before attempt n+1; after the last delay's attempt fails, the delivery has failed. A `final`
 * attempt (a manual retry outside the schedule, or one whose event is no longer kept) fails
 * without a retry and without disabling anything.
 */
export function stateAfterAttempt(
  schedule: readonly number[],
  attempt: { attempts: number; final: boolean; ok: boolean },
): NextState {
  if (attempt.ok) return { status: 'delivered', retryInSeconds: null, exhausted: false };
  if (attempt.final) return { status: 'failed', retryInSeconds: null, exhausted: false };
  const delay = schedule[attempt.attempts - 1];
  if (delay === undefined) return { status: 'failed', retryInSeconds: null, exhausted: true };
  return { status: 'pending', retryInSeconds: delay, exhausted: false };
}

/** Pure: what a failed attempt is called in a delivery's record (never the receiver's body). */
export function describeFailure(error: unknown, timeoutSeconds: number): string {
  const refusal = addressRefusal(error);
  if (refusal) return refusal.message;
  const code = (error as { code?: string } | null)?.code;
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `No answer within ${timeoutSeconds} s`;
  }
  if (code === 'ECONNREFUSED') return 'Connection refused';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') return 'The connection was closed before an answer';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'The host name does not resolve';
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'The connection timed out';
  return 'The request failed';
}

/** A claimed delivery, with its webhook's address and secret and its event (null: removed by the retention). */
export interface Claimed {
  id: string;
  webhook_id: string;
  attempts: number;
  manual: boolean;
  url: string;
  secret: string;
  event: Event | null;
}

interface Target {
  id: string;
  url: string;
  secret: string;
}

/** A delivery attempted, and what the attempt came to: a row of recordOutcomes. */
export interface Attempted {
  delivery: Claimed;
  outcome: AttemptOutcome;
}

/**
 * A claim's margin past the attempt's timeout, for recording its outcome (a statement of up to 500
 * outcomes, gathered for 100 ms). Also what a delivery waits beyond the timeout after its process died:
 * with the default timeout and sweep, 15 + 10 + 5 s, as soon as the first retry of a failed attempt.
 */
const RECORD_MARGIN_SECONDS = 10;

/** How long a claim holds a delivery: the attempt's timeout, and a margin for recording its outcome. */
export function leaseSeconds(client: WebhookClient): number {
  return client.timeoutSeconds + RECORD_MARGIN_SECONDS;
}

/**
 * The columns of a claimed delivery as claimedOf reads them, from `c` (the delivery), `w` (its
 * webhook) and `e` (its event, LEFT JOINed): the job's claim and the fan-out's round (dispatch.ts)
 * return deliveries alike.
 */
export const claimedColumns = Prisma.sql`c.id::text, c.webhook_id::text, c.attempts, c.manual, w.url, w.secret,
  e.id AS e_id, e.type AS e_type, e.created_at AS e_created_at, e.organization_id AS e_organization_id,
  e.inbox_id::text AS e_inbox_id, e.thread_id::text AS e_thread_id, e.message_id::text AS e_message_id,
  e.data AS e_data`;

export type ClaimedRow = Omit<Claimed, 'event'> & EventColumns;

export function claimedOf(row: ClaimedRow): Claimed {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    attempts: row.attempts,
    manual: row.manual,
    url: row.url,
    secret: row.secret,
    event: eventOf(row),
  };
}

/** The job's handler: attempts the webhook's due deliveries until none is left (or its turn ends). */
export async function deliverDue(deps: DeliveryDeps, webhookId: string, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  while (!signal.aborted) {
    if ((await deliverBatch(deps, webhookId)) === 0) return;
    if (Date.now() - started > JOB_TURN_MS) {
      await deps.jobs.send('deliver-webhook', { webhook_id: webhookId }, { key: webhookId });
      return;
    }
  }
}

/**
 * Claims up to BATCH of the webhook's due deliveries, attempts them at once and records the
 * outcomes; answers how many it claimed (0: none was due, or the webhook is gone). The claim keeps
 * the jobs of every replica, and the deliveries a round leased to its process (dispatch.ts), apart.
 */
export async function deliverBatch(deps: Omit<DeliveryDeps, 'jobs'>, webhookId: string): Promise<number> {
  // One round trip before the attempts: the claim returns what they need (webhook, event).
  const claimed = await preparedStatements(deps.db.pool).query<ClaimedRow>(Prisma.sql`
    WITH c AS (
      UPDATE webhook_deliveries
         SET next_attempt_at = now() + make_interval(secs => ${leaseSeconds(deps.webhookClient)}), attempt_started_at = now()
       WHERE id IN (
         SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.webhook_id = ${webhookId}::uuid AND d.status = 'pending' AND d.next_attempt_at <= now()
            AND (w.enabled OR d.manual)
          ORDER BY d.next_attempt_at
          LIMIT ${BATCH}
          FOR UPDATE OF d SKIP LOCKED)
      RETURNING id, webhook_id, event_id, attempts, manual)
    SELECT ${claimedColumns}
      FROM c JOIN webhooks w ON w.id = c.webhook_id LEFT JOIN events e ON e.id = c.event_id`);
  if (claimed.length === 0) return 0;
  const attempts = await Promise.all(
    claimed.map(claimedOf).map(async (delivery) => ({ delivery, outcome: await attemptClaimed(deps.webhookClient, delivery) })),
  );
  await recordOutcomes(deps, attempts);
  return claimed.length;
}

export function attemptClaimed(client: WebhookClient, delivery: Claimed): Promise<AttemptOutcome> {
  return attemptDelivery(
    client,
    { id: delivery.webhook_id, url: delivery.url, secret: delivery.secret },
    delivery.id,
    delivery.event ?? undefined,
  );
}

/** The event's columns as the claim returns them (prefixed: the delivery has an id too). */
interface EventColumns {
  /** int8, which pg reads as text. */
  e_id: string | null;
  e_type: string;
  e_created_at: Date;
  e_organization_id: string;
  e_inbox_id: string;
  e_thread_id: string | null;
  e_message_id: string | null;
  e_data: Prisma.JsonValue;
}

function eventOf(row: EventColumns): Event | null {
  if (row.e_id === null) return null;
  return {
    id: BigInt(row.e_id),
    type: row.e_type,
    createdAt: row.e_created_at,
    organizationId: row.e_organization_id,
    inboxId: row.e_inbox_id,
    threadId: row.e_thread_id,
    messageId: row.e_message_id,
    data: row.e_data,
  };
}

/** One POST of the event to the receiver, signed; never throws. */
export async function attemptDelivery(
  client: WebhookClient,
  webhook: Target,
  deliveryId: string,
  event: Event | undefined,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  if (!event)
    return {
      ok: false,
      statusCode: null,
      error: 'The event is no longer kept (its inbox was deleted, or INBOX_EVENT_RETENTION_DAYS passed)',
      durationMs: 0,
    };
  const body = JSON.stringify(toEventResponse(event));
  try {
    const response = await request(webhook.url, {
      method: 'POST',
      body,
      headers: {
        ...signedHeaders(client.signingKeys.of(webhook.secret), deliveryId, body, new Date()),
        'content-type': 'application/json',
        'user-agent': 'inbox-api-webhooks/1',
      },
      dispatcher: client.agent,
      // undici's request follows no redirect (a 3xx is a failed attempt): nothing can lead a delivery elsewhere.
      signal: AbortSignal.timeout(client.timeoutSeconds * 1000),
    });
    // Read (and drop) what the receiver sends, so that the connection is kept for the next delivery.
    await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { ok: true, statusCode: status, error: null, durationMs: took() };
    const error = status >= 300 && status < 400 ? `Redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
    return { ok: false, statusCode: status, error, durationMs: took() };
  } catch (error) {
    return { ok: false, statusCode: null, error: describeFailure(error, client.timeoutSeconds), durationMs: took() };
  }
}

/**
 * Writes the outcomes of attempts (of any webhooks) in one statement (prepared: under load it runs
 * for nearly every commit), and disables each webhook of which a delivery spent the schedule.
 */
export async function recordOutcomes(deps: Omit<DeliveryDeps, 'jobs'>, attempts: Attempted[]): Promise<void> {
  const now = new Date();
  const schedule = deps.config.INBOX_WEBHOOK_RETRY_SCHEDULE;
  const exhausted = new Map<string, { deliveryId: string; attempts: number; error: string | null }>();
  const rows = attempts.map(({ delivery, outcome }) => {
    const attempts = delivery.attempts + 1;
    // An event gone (the inbox deleted, or past the retention) cannot come back: retrying it would only disable the webhook.
    const final = delivery.manual || delivery.event === null;
    const next = stateAfterAttempt(schedule, { attempts, final, ok: outcome.ok });
    if (next.exhausted) exhausted.set(delivery.webhook_id, { deliveryId: delivery.id, attempts, error: outcome.error });
    const entry: AttemptRecord = {
      at: now.toISOString(),
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: outcome.durationMs,
    };
    return {
      id: delivery.id,
      status: next.status,
      next_attempt_at: next.retryInSeconds === null ? null : new Date(now.getTime() + next.retryInSeconds * 1000).toISOString(),
      status_code: outcome.statusCode,
      error: outcome.error,
      delivered: outcome.ok,
      entry,
    };
  });
  await preparedStatements(deps.db.pool).query(Prisma.sql`
    UPDATE webhook_deliveries d
       SET status = r.status,
           attempts = d.attempts + 1,
           manual = false,
           next_attempt_at = r.next_attempt_at,
           attempt_started_at = NULL,
           last_attempt_at = ${now},
           last_status_code = r.status_code,
           last_error = r.error,
           delivered_at = CASE WHEN r.delivered THEN ${now} ELSE d.delivered_at END,
           attempt_log = (CASE WHEN jsonb_array_length(d.attempt_log) >= ${ATTEMPT_LOG_LENGTH} THEN d.attempt_log - 0 ELSE d.attempt_log END)
                         || jsonb_build_array(r.entry)
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
           AS r(id uuid, status text, next_attempt_at timestamptz, status_code int, error text, delivered boolean, entry jsonb)
     WHERE d.id = r.id`);
  for (const [webhookId, spent] of exhausted) {
    const total = schedule.reduce((sum, seconds) => sum + seconds, 0);
    const reason =
      `Delivery ${spent.deliveryId} failed ${spent.attempts} times over the whole retry schedule ` +
      `(${formatDuration(total)}); last attempt: ${spent.error ?? 'failed'}`;
    await deps.db.webhook.updateMany({
      where: { id: webhookId, enabled: true },
      data: { enabled: false, disabledReason: reason },
    });
    deps.logger.warn(
      { webhookId, deliveryId: spent.deliveryId },
      'webhooks: a delivery failed for the whole schedule; webhook disabled',
    );
  }
}

function formatDuration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
