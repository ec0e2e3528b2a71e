import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import {
  type DeliveryEvent,
  isoTime,
  lenientNumber,
  lenientText,
  MAX_EVENTS,
  type ReportedStatus,
  shortText,
} from '../delivery-status.js';

/*
 * SendGrid's Event Webhook (https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event):
 * a JSON array of events. Signed (Signed Event Webhook): X-Twilio-Email-Event-Webhook-Signature is
 * a base64 DER ECDSA P-256 signature with SHA-256 of the X-Twilio-Email-Event-Webhook-Timestamp
 * header followed by the raw body, checked with the public key SendGrid shows
 * (SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY). A message is named by `sg_message_id`: the X-Message-Id
 * SendGrid answered the send with (transport_message_id), a dot, and SendGrid's suffix; the id
 * itself may hold dots (`14c5d75ce93.dfd.64b469` in SendGrid's examples), so each prefix ending
 * before a dot is tried, longest first (sendgridTransportIds). Taken:
 * - `delivered` → delivered;
 * - `bounce` → bounced, of either type: `bounce` (permanent) and `blocked` (the receiving server
 *   refused it for now; SendGrid does not retry it, unlike a `deferred` message);
 * - `dropped` → failed (SendGrid never sent it: a suppressed or invalid address, spam content);
 * - `spamreport` → complained.
 * Other events (processed, deferred, open, click, unsubscribes) change nothing; nor do events with
 * no sg_message_id (an asynchronous bounce, SendGrid says, carries none), nor an element of the
 * batch that is no event at all: the rest of the batch applies, or SendGrid would retry it all.
 * One event not in an array (as SendGrid's signature examples are) is taken as a batch of one.
 */

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** The verification key as SendGrid shows it (base64 of the DER public key), or PEM. Throws when it is neither. */
export function sendgridPublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  const key = trimmed.startsWith('-----BEGIN')
    ? createPublicKey(trimmed)
    : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec') throw new Error('SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY is not an ECDSA public key');
  return key;
}

/**
 * Whether SendGrid signed `body` at `timestamp` (Unix seconds, as the header gives it). The
 * timestamp's age is not limited, as SendGrid's own verifiers do not limit it: a replayed batch
 * changes nothing (a status only moves forward, and each change is made once), and a window would
 * refuse SendGrid's retries after an outage of ours, or everything while the two clocks disagree. Pure.
 */
export function checkSendgridSignature(
  request: { signature: string | undefined; timestamp: string | undefined; body: Buffer },
  options: { publicKey: KeyObject },
): { valid: true } | { valid: false; reason: string } {
  const { signature, timestamp } = request;
  if (!signature || !timestamp) {
    return {
      valid: false,
      reason: 'The SendGrid signature headers (X-Twilio-Email-Event-Webhook-Signature, -Timestamp) are missing',
    };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { valid: false, reason: 'The SendGrid signature timestamp is not a number' };
  if (!/^[A-Za-z0-9+/]{1,400}={0,2}$/.test(signature)) return { valid: false, reason: 'The SendGrid signature is not base64' };
  let ok: boolean;
  try {
    ok = verify(
      'sha256',
      Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]),
      options.publicKey,
      Buffer.from(signature, 'base64'),
    );
  } catch {
    ok = false;
  }
  return ok ? { valid: true } : { valid: false, reason: 'The SendGrid signature does not match' };
}

const sendgridEvent = z
  .object({
    event: z.string().max(100),
    sg_message_id: z.string().max(1000).optional(),
    email: lenientText,
    timestamp: lenientNumber,
    type: lenientText,
    reason: lenientText,
    response: lenientText,
    status: lenientText,
  })
  .catchall(z.unknown());

// A Map: the provider names the key, and a plain object would answer `constructor` or `toString` too.
const STATUS_OF = new Map<string, ReportedStatus>([
  ['delivered', 'delivered'],
  ['bounce', 'bounced'],
  ['dropped', 'failed'],
  ['spamreport', 'complained'],
]);

/** Dots of an sg_message_id tried (SendGrid's suffixes hold four or five). */
const MAX_PREFIXES = 12;

/**
 * The X-Message-Ids an sg_message_id may start with, longest first: the whole id, then each prefix
 * that ends before a dot (`a.b.filter1.0` → `a.b.filter1.0`, `a.b.filter1`, `a.b`, `a`). The id
 * SendGrid answered the send with is one of them, whether or not it holds dots itself. Pure.
 */
export function sendgridTransportIds(sgMessageId: string): string[] {
  const parts = sgMessageId.trim().split('.');
  const count = Math.min(parts.length, MAX_PREFIXES);
  return Array.from({ length: count }, (_, dropped) => parts.slice(0, parts.length - dropped).join('.')).filter(
    (id) => id !== '',
  );
}

/**
 * The delivery events of an Event Webhook body (JSON, parsed): an array of events, or one event;
 * 400 for anything else. Elements that are no event are passed over. Pure.
 */
export function sendgridDeliveryEvents(json: unknown, now = new Date()): DeliveryEvent[] {
  const batch = z.union([z.array(z.unknown()).max(MAX_EVENTS), z.looseObject({}).transform((event) => [event])]).safeParse(json);
  if (!batch.success) {
    throw new BadRequestError(`The request is not a SendGrid Event Webhook body: a JSON array of at most ${MAX_EVENTS} events`);
  }
  return batch.data.flatMap((element): DeliveryEvent[] => {
    const parsed = sendgridEvent.safeParse(element);
    if (!parsed.success) return [];
    const event = parsed.data;
    const status = STATUS_OF.get(event.event);
    const transportMessageIds = event.sg_message_id ? sendgridTransportIds(event.sg_message_id) : [];
    if (!status || transportMessageIds.length === 0) return [];
    const words =
      event.event === 'delivered'
        ? [event.response]
        : [event.type, event.status, event.reason ?? event.response].filter((word) => word !== undefined && word !== '');
    return [
      {
        provider: 'sendgrid',
        transportMessageIds,
        status,
        detail: {
          provider: 'sendgrid',
          event: event.event,
          recipient: shortText(event.email, 320),
          reason: shortText(words.join(': ')),
          timestamp: isoTime(event.timestamp, now),
        },
      },
    ];
  });
}
