/**
 * The outbound safety gate: the one function every send asks before its outbox record is written
 * (send.ts). In order: the kill switches (the inbox's and its organization's `sending_enabled`:
 * 403 `sending_disabled`), the send lists (403 `recipient_blocked`, naming the addresses), the
 * inbox's send_policy (`approval`: the send is held as a draft pending approval, unless it is an
 * approved draft's), then the caps (sends per inbox per hour and per day, the API key's sends per
 * hour, new recipients per inbox per day: 429 `rate_limited` with Retry-After). Nothing is sent
 * when it refuses.
 */
import { PolicyRefusal, RateLimitedError } from '@repo/errors';
import type { WindowedRateLimit } from '@repo/rate-limit';
import { type Actor, effectiveLimit } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import type { Inbox } from '../generated/prisma/client.js';
import { holdLiveInbox } from '../inboxes/service.js';
import { refusedAddresses } from '../lists/rules.js';
import { listRulesFor } from '../lists/service.js';

export interface PolicyDeps {
  db: Database;
  /** Sends per inbox per hour and per day. */
  sendLimit: WindowedRateLimit<'hour' | 'day'>;
  sendsPerHour: number;
  sendsPerDay: number;
  /** Sends per organization API key per hour: the key's send_limit_per_hour, else `keySendsPerHour`. */
  keySendLimit: WindowedRateLimit<'hour'>;
  keySendsPerHour: number;
  /** Distinct addresses an inbox has never sent to, per 24 hours; 0: no limit. */
  newRecipientsPerDay: number;
}

export interface OutboundRequest {
  actor: Actor;
  inbox: Pick<Inbox, 'id' | 'organizationId'>;
  /** Every recipient: to, cc and bcc. */
  recipients: readonly string[];
  /**
   * `send` (default): the send itself, counted by the caps; `approved`: an approved draft's send,
   * which is not held again; `submit`: a draft submitted, asked whether it may go or waits for
   * approval (its send is counted when it is made).
   */
  stage?: 'send' | 'approved' | 'submit';
}

/**
 * Throws when the send may not go. `hold`: the inbox sends only what is approved, and this send
 * is to become a draft pending approval; `send`: every check passed (and the caps counted it).
 */
export async function checkOutbound(deps: PolicyDeps, request: OutboundRequest): Promise<'send' | 'hold'> {
  const stage = request.stage ?? 'send';
  const { sendPolicy } = await requireSendingEnabled(deps.db, request.inbox);
  const refused = refusedAddresses(request.recipients, await listRulesFor(deps.db, request.inbox, 'send'));
  if (refused.length > 0) {
    throw new PolicyRefusal('recipient_blocked', `Blocked by the send lists: ${refused.join(', ')}`, { addresses: refused });
  }
  if (sendPolicy === 'approval' && stage !== 'approved') return 'hold';
  if (stage === 'submit') return 'send';
  await deps.sendLimit.consume(request.inbox.id, inboxLimits(deps));
  const key = keyLimits(deps, request.actor);
  // A send one cap refuses is not made: it gives back what the caps before it counted.
  if (key) {
    await deps.keySendLimit.consume(key.limitKey, key.limits).catch(async (error: unknown) => {
      await deps.sendLimit.giveBack(request.inbox.id, inboxLimits(deps));
      throw error;
    });
  }
  await countNewRecipients(deps, request.inbox.id, request.recipients).catch(async (error: unknown) => {
    await giveBackSend(deps, request);
    throw error;
  });
  return 'send';
}

/**
 * Gives back what checkOutbound's caps counted for a send that was not made after all (a retry
 * whose Idempotency-Key another request took first, a send that failed before it was recorded).
 * The new recipients stay recorded: the same addresses are never counted twice.
 */
export async function giveBackSend(deps: PolicyDeps, request: Pick<OutboundRequest, 'actor' | 'inbox'>): Promise<void> {
  await deps.sendLimit.giveBack(request.inbox.id, inboxLimits(deps));
  const key = keyLimits(deps, request.actor);
  if (key) await deps.keySendLimit.giveBack(key.limitKey, key.limits);
}

const inboxLimits = (deps: PolicyDeps) => ({ hour: deps.sendsPerHour, day: deps.sendsPerDay });

/** The key cap of a send by an organization API key (none for the operator). */
function keyLimits(deps: PolicyDeps, actor: Actor) {
  if (actor.kind !== 'key') return undefined;
  return { limitKey: actor.limitKey, limits: { hour: effectiveLimit(actor.limits.sendLimitPerHour, deps.keySendsPerHour) } };
}

/** 403 `sending_disabled` while the inbox's or its organization's kill switch is off; else the inbox's send policy. */
export async function requireSendingEnabled(
  db: Database,
  inbox: { id: string; organizationId: string },
): Promise<{ sendPolicy: 'direct' | 'approval' }> {
  const state = await db.inbox.findUnique({
    where: { id: inbox.id },
    select: { sendingEnabled: true, sendPolicy: true, organization: { select: { sendingEnabled: true } } },
  });
  if (state && !state.sendingEnabled) {
    throw new PolicyRefusal('sending_disabled', 'Sending is disabled for this inbox (sending_enabled is false)', {
      inbox_id: inbox.id,
    });
  }
  if (state && !state.organization.sendingEnabled) {
    throw new PolicyRefusal('sending_disabled', 'Sending is disabled for this organization (sending_enabled is false)', {
      organization_id: inbox.organizationId,
    });
  }
  return { sendPolicy: state?.sendPolicy ?? 'direct' };
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * Records the recipients the inbox has never written to, refusing the send (429) when they would
 * bring the addresses first written to in the last 24 hours past the limit. One send of an inbox
 * at a time counts (an advisory lock in its transaction), so replicas never let more through.
 */
async function countNewRecipients(deps: PolicyDeps, inboxId: string, recipients: readonly string[]): Promise<void> {
  const limit = deps.newRecipientsPerDay;
  if (limit === 0) return;
  const addresses = [...new Set(recipients.map((address) => address.trim().toLowerCase()))];
  await deps.db.$transaction(async (tx) => {
    // A delete under way answers 404 here, as the send would (and its contacts go with the inbox).
    await holdLiveInbox(tx, inboxId);
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`inbox-contacts:${inboxId}`}))`;
    const known = await tx.inboxContact.findMany({ where: { inboxId, address: { in: addresses } }, select: { address: true } });
    const fresh = newAddresses(
      addresses,
      known.map((contact) => contact.address),
    );
    if (fresh.length === 0) return;
    const since = new Date(Date.now() - DAY_MS);
    const recent = await tx.inboxContact.findMany({
      where: { inboxId, firstSentAt: { gt: since } },
      orderBy: { firstSentAt: 'asc' },
      select: { firstSentAt: true },
    });
    if (recent.length + fresh.length > limit) {
      // Room comes back as the oldest of them leave the 24 hours.
      const freedBy = recent[Math.max(0, recent.length + fresh.length - limit - 1)]?.firstSentAt;
      const retryAfter = freedBy ? (freedBy.getTime() + DAY_MS - Date.now()) / 1000 : DAY_MS / 1000;
      const error = new RateLimitedError(`Too many new recipients from this inbox: at most ${limit} per day`, retryAfter);
      Object.assign(error.details, { limit, new_recipients: fresh });
      throw error;
    }
    await tx.inboxContact.createMany({ data: fresh.map((address) => ({ inboxId, address })), skipDuplicates: true });
  });
}

/** The addresses not among those known, in order. */
export function newAddresses(addresses: readonly string[], known: readonly string[]): string[] {
  const seen = new Set(known);
  return addresses.filter((address) => !seen.has(address));
}
