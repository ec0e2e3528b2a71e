import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import { type DeliveryEvent, isoTime, MAX_EVENTS, type ReportedStatus, shortText } from '../delivery-status.js';

/*
 * SendGrid's Event Webhook (https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event):
 * a JSON array of events. Signed (Signed Event Webhook): X-Twilio-Email-Event-Webhook-Signature is
 * a base64 DER ECDSA P-256 signature with SHA-256 of the X-Twilio-Email-Event-Webhook-Timestamp
 * header followed by the raw body, checked with the public key SendGrid shows
 * (SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY). A message is named by `sg_message_id`: the X-Message-Id
 * SendGrid answered the send with (transport_message_id), a dot, and SendGrid's suffix. Taken:
 * - `delivered` → delivered;
 * - `bounce` → bounced, of either type: `bounce` (permanent) and `blocked` (the receiving server
 *   refused it for now; SendGrid does not retry it, unlike a `deferred` message);
 * - `dropped` → failed (SendGrid never sent it: a suppressed or invalid address, spam content);
 * - `spamreport` → complained.
 * Other events (processed, deferred, open, click, unsubscribes) change nothing; nor do events with
 * no sg_message_id (an asynchronous bounce, SendGrid says, carries none).
 */

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';
/** How old a signed request may be: SendGrid retries a failed POST for 24 hours. */
const MAX_AGE_SECONDS = 3 * 24 * 3600;
/** How far ahead of this server's clock a timestamp may be. */
const MAX_SKEW_SECONDS = 5 * 60;

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
 * Whether SendGrid signed `body` at `timestamp` (Unix seconds, as the header gives it), and the
 * timestamp is within the last 3 days of `now`. Pure but for the clock passed in.
 */
export function checkSendgridSignature(
  request: { signature: string | undefined; timestamp: string | undefined; body: Buffer },
  options: { publicKey: KeyObject; now: Date },
): { valid: true } | { valid: false; reason: string } {
  const { signature, timestamp } = request;
  if (!signature || !timestamp) {
    return {
      valid: false,
      reason: 'The SendGrid signature headers (X-Twilio-Email-Event-Webhook-Signature, -Timestamp) are missing',
    };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { valid: false, reason: 'The SendGrid signature timestamp is not a number' };
  const age = options.now.getTime() / 1000 - Number(timestamp);
  if (age > MAX_AGE_SECONDS || age < -MAX_SKEW_SECONDS) {
    return { valid: false, reason: 'The SendGrid signature timestamp is not of the last 3 days' };
  }
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
    email: z.string().optional(),
    timestamp: z.number().optional(),
    type: z.string().optional(),
    reason: z.string().optional(),
    response: z.string().optional(),
    status: z.string().optional(),
  })
  .catchall(z.unknown());

// A Map: the provider names the key, and a plain object would answer `constructor` or `toString` too.
const STATUS_OF = new Map<string, ReportedStatus>([
  ['delivered', 'delivered'],
  ['bounce', 'bounced'],
  ['dropped', 'failed'],
  ['spamreport', 'complained'],
]);

/** The X-Message-Id an sg_message_id starts with (the part before its first dot). */
export function sendgridTransportId(sgMessageId: string): string {
  return sgMessageId.trim().split('.')[0]!;
}

/** The delivery events of an Event Webhook body (JSON, parsed); 400 when it is not an array of events. Pure. */
export function sendgridDeliveryEvents(json: unknown, now = new Date()): DeliveryEvent[] {
  const parsed = z.array(sendgridEvent).max(MAX_EVENTS).safeParse(json);
  if (!parsed.success) {
    throw new BadRequestError(`The request is not a SendGrid Event Webhook body: a JSON array of at most ${MAX_EVENTS} events`);
  }
  return parsed.data.flatMap((event): DeliveryEvent[] => {
    const status = STATUS_OF.get(event.event);
    const transportMessageId = event.sg_message_id ? sendgridTransportId(event.sg_message_id) : '';
    if (!status || !transportMessageId) return [];
    const words =
      event.event === 'delivered'
        ? [event.response]
        : [event.type, event.status, event.reason ?? event.response].filter((word) => word !== undefined && word !== '');
    return [
      {
        provider: 'sendgrid',
        transportMessageId,
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
