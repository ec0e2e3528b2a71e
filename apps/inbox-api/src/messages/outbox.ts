/**
 * The outbox. An outbound message is recorded `sending` before the transport is called, with a
 * lease: the time until which the sending process owns it. After the transport it becomes `sent`
 * (its Idempotency-Key keeps the answer to replay) or `failed` (the key is released, so the client
 * may try again). A send still `sending` past its lease was interrupted (its process stopped) and
 * is resolved by the reconciler. `metadata.delivery` tells clients where a message stands.
 */
import { type InterruptedSend, SEND_TIMEOUT_MS } from '../adapters/mail/index.js';
import { type Database, prismaStatements } from '../database.js';
import { appendEvents, type EventType } from '../events/log.js';
import { Prisma } from '../generated/prisma/client.js';
import type { DeliveryDetail } from '../webhooks/delivery-status.js';
import { messageEvent } from './events.js';
import type { SendResult } from './schemas.js';

export type DeliveryStatus = 'sending' | 'sent' | 'failed';

/** `metadata.delivery` of an outbound message, as the API shows it (a type, so that it is JSON to Prisma). */
export type Delivery = {
  status: DeliveryStatus;
  /** The transport that sends it: local, smtp, mailgun, sendgrid or ses. */
  provider: string;
  /** Why it failed: the provider's answer, or that the outcome could not be known. */
  reason?: string;
  updated_at: string;
};

type Transaction = Prisma.TransactionClient | Database;

/** The longest transport_message_id kept (as a Message-ID's line). */
const MAX_TRANSPORT_ID = 998;

/** What a send's outcome writes into the message's metadata. Pure. */
export function deliveryMetadata(
  status: DeliveryStatus,
  options: { provider: string; reason?: string; at: Date },
): { delivery: Delivery } {
  return {
    delivery: {
      status,
      provider: options.provider,
      ...(options.reason !== undefined && { reason: options.reason }),
      updated_at: options.at.toISOString(),
    },
  };
}

/** `delivery_detail` of a send's own outcome (the provider's events replace it later, webhooks/delivery-status.ts). Pure. */
export function sendDetail(options: { provider: string; reason: string | null; at: Date }): DeliveryDetail {
  return {
    provider: options.provider,
    event: 'send',
    recipient: null,
    reason: options.reason,
    timestamp: options.at.toISOString(),
  };
}

/**
 * How an interrupted send ends, from what the transport can tell about it afterwards: `sent` when
 * it confirms the message was handed over; otherwise `failed`, since sending it again could
 * deliver it twice. Pure.
 */
export function interruptedOutcome(
  provider: string,
  confirmation: InterruptedSend,
): { status: 'sent' | 'failed'; reason?: string } {
  if (confirmation === 'sent') return { status: 'sent' };
  if (confirmation === 'not-sent') {
    return {
      status: 'failed',
      reason: `The service stopped before ${provider} took the message: it was not sent. Send it anew.`,
    };
  }
  return {
    status: 'failed',
    reason:
      `The service stopped while handing the message to ${provider}; ${provider} cannot tell whether it took the ` +
      'message, so it is not sent again. Send it anew if the recipients did not get it.',
  };
}

/** The end of a lease that starts now, in the database's clock (replicas' clocks may differ). */
export function leaseEnd(tx: Transaction, leaseSeconds: number): Promise<Date> {
  return tx.$queryRaw<{ until: Date }[]>`SELECT now() + make_interval(secs => ${leaseSeconds}) AS until`.then(
    ([row]) => row!.until,
  );
}

/**
 * Marks a send delivered: `sent`, with the Message-ID the provider delivered it under (SES
 * replaces ours), completes its Idempotency-Key with `result`, and appends `message.sent`. A send
 * the reconciler had already given up on is marked sent all the same: the transport's answer is
 * the truth. One already `sent` is left as it is (no second event).
 */
export async function markSent(
  db: Database,
  send: { messageId: string; provider: string; providerMessageId: string; transportMessageId?: string; result: SendResult },
): Promise<void> {
  const now = new Date();
  await db.$transaction(async (tx) => {
    // updateMany: the inbox (and the message with it) may have been deleted meanwhile.
    const { count } = await tx.message.updateMany({
      where: { id: send.messageId, status: { not: 'sent' } },
      data: {
        status: 'sent',
        leaseUntil: null,
        providerMessageId: send.providerMessageId,
        // Providers' ids are 20 to 100 characters; a longer one is no id to match events by (and would not fit the index).
        transportMessageId:
          send.transportMessageId !== undefined && send.transportMessageId.length <= MAX_TRANSPORT_ID
            ? send.transportMessageId
            : null,
        metadata: deliveryMetadata('sent', { provider: send.provider, at: now }),
        deliveryStatus: 'sent',
        deliveryDetail: sendDetail({ provider: send.provider, reason: null, at: now }),
      },
    });
    await tx.idempotencyKey.updateMany({
      where: { messageId: send.messageId },
      data: { response: send.result, completedAt: now },
    });
    if (count > 0) await appendMessageEvent(tx, 'message.sent', send.messageId);
  });
}

/**
 * Marks a send failed with `reason`, releases its Idempotency-Key so the client may try again, and
 * appends `message.failed`. `notSent`: the transport surely did not take it; a scheduled draft that
 * claimed the message (drafts/service.ts) is freed then, so that its next attempt sends it anew (a
 * send whose outcome is unknown keeps its draft, which is then not sent twice); `onDraftFreed`
 * runs for it in the same transaction (the reconciler queues that attempt there: the draft's own
 * job may have died with the process that sent it).
 */
export async function markFailed(
  db: Database,
  send: { messageId: string; provider: string; reason: string; notSent: boolean },
  onDraftFreed?: (tx: Prisma.TransactionClient, draftId: string) => Promise<unknown>,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const { count } = await tx.message.updateMany({
      // Never over a `sent`: a late failure report cannot undo a delivery.
      where: { id: send.messageId, status: { notIn: ['sent', 'failed'] } },
      data: {
        status: 'failed',
        leaseUntil: null,
        metadata: deliveryMetadata('failed', { provider: send.provider, reason: send.reason, at: new Date() }),
        deliveryStatus: 'failed',
        deliveryDetail: sendDetail({ provider: send.provider, reason: send.reason, at: new Date() }),
      },
    });
    await tx.idempotencyKey.deleteMany({ where: { messageId: send.messageId, completedAt: null } });
    if (send.notSent) {
      const freed = await tx.draft.updateManyAndReturn({
        where: { messageId: send.messageId, status: 'scheduled' },
        data: { messageId: null },
        select: { id: true },
      });
      for (const draft of freed) await onDraftFreed?.(tx, draft.id);
    }
    if (count > 0) await appendMessageEvent(tx, 'message.failed', send.messageId);
  });
}

/** Appends the event of a message's change, last in `tx` (as appendEvents needs). */
async function appendMessageEvent(tx: Prisma.TransactionClient, type: EventType, messageId: string): Promise<void> {
  const message = await tx.message.findUniqueOrThrow({
    where: { id: messageId },
    include: { inbox: { select: { organizationId: true } } },
  });
  const { inbox, ...record } = message;
  await appendEvents(prismaStatements(tx), [messageEvent(type, inbox, record)]);
}

/**
 * Waits until no send of the inbox, or made with the API key, is `sending` under a valid lease,
 * or until `waitSeconds` pass: what a delete of either waits for before it answers.
 */
export async function waitForSends(
  db: Database,
  of: { inboxId: string } | { apiKeyId: string },
  waitSeconds: number,
): Promise<void> {
  const whose = 'inboxId' in of ? Prisma.sql`inbox_id = ${of.inboxId}::uuid` : Prisma.sql`api_key_id = ${of.apiKeyId}::uuid`;
  const deadline = Date.now() + waitSeconds * 1000;
  while (Date.now() < deadline) {
    const [{ count }] = await db.$queryRaw<[{ count: bigint }]>`
      SELECT count(*) AS count FROM messages WHERE ${whose} AND status = 'sending' AND lease_until > now()`;
    if (count === 0n) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How long a delete waits for sends under way: they end within the provider timeout; a crashed one is left to the reconciler. */
export function sendsWaitSeconds(leaseSeconds: number): number {
  return Math.min(leaseSeconds, SEND_TIMEOUT_MS / 1000 + 5);
}
