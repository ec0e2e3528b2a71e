/**
 * Webhooks of an organization (the receivers of its events) and their deliveries. Scoped like
 * API keys: a key sees the webhooks of its organization, and a key limited to some inboxes only
 * those limited to inboxes it reaches (another scope's are not found: 404).
 */
import { ForbiddenError, NotFoundError, ValidationError } from '@repo/errors';
import { refusalMessage, refusedHost } from '@repo/net-guard';
import { isForeignKeyViolation } from '@repo/db';
import { type Actor, canReachKey, organizationNotFound, type Scope, scopeOf } from '../api-keys/scope.js';
import { organizationOfNew, reachableInboxes, writeAsLiveKey } from '../api-keys/service.js';
import type { Database } from '../database.js';
import type { EventType } from '../events/log.js';
import type { JobQueue } from '../jobs/queue.js';
import { Prisma, type Webhook, type WebhookDelivery } from '../generated/prisma/client.js';
import { findOrganization } from '../organizations/service.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import type {
  AttemptRecord,
  CreatedWebhookResponse,
  CreateWebhookInput,
  DeliveryResponse,
  UpdateWebhookInput,
  WebhookResponse,
} from './schemas.js';
import { newSecret } from './sign.js';

export interface WebhookSettings {
  allowPrivate: boolean;
}

export function toWebhookResponse(webhook: Webhook): WebhookResponse {
  return {
    id: webhook.id,
    url: webhook.url,
    event_types: webhook.eventTypes as EventType[],
    inbox_ids: webhook.inboxIds.length > 0 ? webhook.inboxIds : null,
    enabled: webhook.enabled,
    disabled_reason: webhook.disabledReason,
    organization_id: webhook.organizationId,
    created_at: webhook.createdAt.toISOString(),
  };
}

/** 400 when the URL's host is refused as written (a loopback, private, link-local or metadata address); its resolved addresses are checked at every delivery. */
export function checkReceiverUrl(url: string, settings: WebhookSettings): void {
  const refusal = refusedHost(new URL(url).hostname, { allowPrivate: settings.allowPrivate });
  if (refusal) {
    const message = refusalMessage('The host is', refusal, 'which webhooks may not be called at', 'INBOX_WEBHOOK_ALLOW_PRIVATE');
    throw new ValidationError([{ loc: ['body', 'url'], msg: message, type: 'value_error' }], message);
  }
}

/** Whether a webhook is within the scope: its organization, and for a limited key only inboxes it reaches. */
export function canReachWebhook(scope: Scope, webhook: Pick<Webhook, 'organizationId' | 'inboxIds'>): boolean {
  return canReachKey(scope, {
    organizationId: webhook.organizationId,
    inboxIds: webhook.inboxIds.length > 0 ? webhook.inboxIds : undefined,
  });
}

/** 403 for a key limited to some inboxes asking for every inbox: it would get events it cannot read. */
function requireInboxesForLimitedKey(scope: Scope, inboxIds: string[] | null | undefined): void {
  if (scope.inboxIds !== undefined && (inboxIds === null || inboxIds === undefined)) {
    throw new ForbiddenError('A key limited to some inboxes can only create webhooks limited to some of them: give inbox_ids');
  }
}

export async function createWebhook(
  db: Database,
  settings: WebhookSettings,
  actor: Actor,
  input: CreateWebhookInput,
): Promise<CreatedWebhookResponse> {
  const scope = scopeOf(actor);
  checkReceiverUrl(input.url, settings);
  const organizationId = await organizationOfNew(db, scope, input);
  await findOrganization(db, scope, organizationId);
  requireInboxesForLimitedKey(scope, input.inbox_ids);
  const inboxIds = input.inbox_ids ? await reachableInboxes(db, scope, organizationId, input.inbox_ids) : [];
  const secret = newSecret();
  try {
    // It gets the events committed after it.
    const afterEventId = await lastEventId(db);
    const webhook = await writeAsLiveKey(db, actor, (tx) =>
      tx.webhook.create({
        data: { organizationId, url: input.url, eventTypes: input.event_types, inboxIds, secret, afterEventId },
      }),
    );
    return { ...toWebhookResponse(webhook), secret };
  } catch (error) {
    if (isForeignKeyViolation(error)) throw organizationNotFound(organizationId);
    throw error;
  }
}

/** The webhook, or 404 (not a UUID, deleted, or outside the scope). */
export async function findWebhook(db: Database, scope: Scope, webhookId: string): Promise<Webhook> {
  const webhook = isUuid(webhookId) ? await db.webhook.findUnique({ where: { id: webhookId } }) : null;
  if (!webhook || !canReachWebhook(scope, webhook)) throw new NotFoundError('Webhook not found', { webhook_id: webhookId });
  return webhook;
}

function scopeWhere(scope: Scope): Prisma.Sql {
  const conditions = [Prisma.sql`TRUE`];
  if (scope.organizationId !== undefined) conditions.push(Prisma.sql`organization_id = ${scope.organizationId}`);
  if (scope.inboxIds !== undefined) {
    conditions.push(Prisma.sql`cardinality(inbox_ids) > 0 AND inbox_ids <@ ${[...scope.inboxIds]}::uuid[]`);
  }
  return Prisma.join(conditions, ' AND ');
}

/** The webhooks within the scope, newest first. */
export async function listWebhooks(
  db: Database,
  scope: Scope,
  options: { limit: number; offset: number; page_token?: string },
): Promise<Page<WebhookResponse>> {
  const where = scopeWhere(scope);
  const { rows, total, next } = await readPage(
    options,
    'webhooks',
    NEWEST_FIRST,
    (_after, take, skip, key) => db.$queryRaw<{ id: string; createdAt: Date }[]>`
      SELECT id, created_at AS "createdAt" FROM webhooks
       WHERE ${where} ${key ? Prisma.sql`AND (created_at, id) < (${key[0]}::timestamptz, ${key[1]}::uuid)` : Prisma.empty}
       ORDER BY created_at DESC, id DESC LIMIT ${take} OFFSET ${skip}`,
    async () => (await db.$queryRaw<{ total: number }[]>`SELECT COUNT(*)::int AS total FROM webhooks WHERE ${where}`)[0]!.total,
  );
  const webhooks = await db.webhook.findMany({
    where: { id: { in: rows.map((row) => row.id) } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return page(webhooks.map(toWebhookResponse), total, next);
}

export async function updateWebhook(
  db: Database,
  settings: WebhookSettings,
  actor: Actor,
  webhookId: string,
  input: UpdateWebhookInput,
): Promise<WebhookResponse> {
  const scope = scopeOf(actor);
  const webhook = await findWebhook(db, scope, webhookId);
  if (input.url !== undefined) checkReceiverUrl(input.url, settings);
  if (input.inbox_ids !== undefined) requireInboxesForLimitedKey(scope, input.inbox_ids);
  const inboxIds =
    input.inbox_ids === undefined
      ? undefined
      : input.inbox_ids === null
        ? []
        : await reachableInboxes(db, scope, webhook.organizationId, input.inbox_ids);
  // Enabled again: it gets the events committed from now on, not those of while it was disabled.
  const reenabled = input.enabled === true && !webhook.enabled;
  const afterEventId = reenabled ? await lastEventId(db) : undefined;
  const { count } = await writeAsLiveKey(db, actor, (tx) =>
    tx.webhook.updateMany({
      where: { id: webhook.id },
      data: {
        ...(input.url !== undefined && { url: input.url }),
        ...(input.event_types !== undefined && { eventTypes: input.event_types }),
        ...(inboxIds !== undefined && { inboxIds }),
        // Enabled again (by hand): the reason it was disabled no longer holds.
        ...(input.enabled !== undefined && { enabled: input.enabled, disabledReason: null }),
        ...(afterEventId !== undefined && { afterEventId }),
      },
    }),
  );
  if (count === 0) throw new NotFoundError('Webhook not found', { webhook_id: webhookId });
  return toWebhookResponse(await findWebhook(db, scope, webhookId));
}

/** The log's last event id (0 while it is empty): a webhook created or enabled now gets the events after it. */
async function lastEventId(db: Database): Promise<bigint> {
  const [last] = await db.$queryRaw<{ id: bigint }[]>`SELECT COALESCE(MAX(id), 0)::bigint AS id FROM events`;
  return last!.id;
}

/** Deletes the webhook and its deliveries (a delivery under way may still arrive once). */
export async function deleteWebhook(db: Database, scope: Scope, webhookId: string): Promise<void> {
  const webhook = await findWebhook(db, scope, webhookId);
  const { count } = await db.webhook.deleteMany({ where: { id: webhook.id } });
  if (count === 0) throw new NotFoundError('Webhook not found', { webhook_id: webhookId });
}

export function toDeliveryResponse(delivery: WebhookDelivery, eventType: string | null): DeliveryResponse {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: Number(delivery.eventId),
    event_type: eventType as EventType | null,
    status: delivery.status as DeliveryResponse['status'],
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: delivery.status === 'pending' ? (delivery.nextAttemptAt?.toISOString() ?? null) : null,
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
    created_at: delivery.createdAt.toISOString(),
    attempt_log: delivery.attemptLog as AttemptRecord[],
  };
}

async function withEventTypes(db: Database, deliveries: WebhookDelivery[]): Promise<DeliveryResponse[]> {
  const events = await db.event.findMany({
    where: { id: { in: deliveries.map((delivery) => delivery.eventId) } },
    select: { id: true, type: true },
  });
  const types = new Map(events.map((event) => [event.id, event.type]));
  return deliveries.map((delivery) => toDeliveryResponse(delivery, types.get(delivery.eventId) ?? null));
}

/** The webhook's deliveries, newest first: those of events in the key's inboxes, for a key limited to some. */
export async function listDeliveries(
  db: Database,
  scope: Scope,
  webhookId: string,
  options: { status?: string; limit: number; offset: number; page_token?: string },
): Promise<Page<DeliveryResponse>> {
  const webhook = await findWebhook(db, scope, webhookId);
  const where = {
    webhookId: webhook.id,
    ...(scope.inboxIds !== undefined && { inboxId: { in: [...scope.inboxIds] } }),
    ...(options.status !== undefined && { status: options.status }),
  };
  const { rows, total, next } = await readPage(
    options,
    'webhook-deliveries',
    { fields: ['createdAt', 'eventId'], shape: ['date', 'bigint'] },
    (after, take, skip) =>
      db.webhookDelivery.findMany({
        where: { AND: [where, after] },
        orderBy: [{ createdAt: 'desc' }, { eventId: 'desc' }],
        take,
        skip,
      }),
    () => db.webhookDelivery.count({ where }),
  );
  return page(await withEventTypes(db, rows), total, next);
}

/** A delivery's attempt that was claimed and whose lease still runs: its outcome is to come. */
const attemptUnderWay = Prisma.sql`(status = 'pending' AND attempt_started_at IS NOT NULL AND next_attempt_at > now())`;

/**
 * Attempts the delivery again now, with the same webhook-id, whatever its state. One still in its
 * schedule (pending, its webhook enabled) keeps it: this is its next attempt, and a failure is
 * retried as the schedule says. Any other (delivered, failed, or of a disabled webhook) gets one
 * attempt outside the schedule (`manual`), whose failure ends it failed again without disabling
 * the webhook. 404 for a delivery of another webhook, or of an event in an inbox the key cannot
 * reach (a webhook's inboxes may have been narrowed since the delivery was made).
 */
export async function retryDelivery(
  { db, jobs }: { db: Database; jobs: JobQueue },
  scope: Scope,
  ids: { webhookId: string; deliveryId: string },
): Promise<DeliveryResponse> {
  const webhook = await findWebhook(db, scope, ids.webhookId);
  const notFound = () => new NotFoundError('Delivery not found', { delivery_id: ids.deliveryId });
  if (!isUuid(ids.deliveryId)) throw notFound();
  // `manual` from the row's own status, in the statement that changes it. An attempt under way (its
  // lease running) is left alone: a second attempt beside it would race it to record its outcome.
  // Read in the same transaction, so the answer shows the delivery as queued, not as an attempt
  // that started meanwhile left it.
  const delivery = await db.$transaction(async (tx) => {
    const count = await tx.$executeRaw`
      UPDATE webhook_deliveries
         SET manual = manual OR status <> 'pending' OR NOT ${webhook.enabled}, status = 'pending',
             next_attempt_at = CASE WHEN ${attemptUnderWay} THEN next_attempt_at ELSE now() END
       WHERE id = ${ids.deliveryId}::uuid AND webhook_id = ${webhook.id}::uuid
         ${scope.inboxIds === undefined ? Prisma.empty : Prisma.sql`AND inbox_id = ANY (${[...scope.inboxIds]}::uuid[])`}`;
    return count === 0 ? null : tx.webhookDelivery.findUniqueOrThrow({ where: { id: ids.deliveryId } });
  });
  if (!delivery) throw notFound();
  await jobs.send('deliver-webhook', { webhook_id: webhook.id }, { key: webhook.id });
  jobs.wake('deliver-webhook');
  return (await withEventTypes(db, [delivery]))[0]!;
}
