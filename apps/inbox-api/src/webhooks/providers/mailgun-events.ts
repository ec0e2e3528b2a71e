import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import { type DeliveryEvent, isoTime, lenientNumber, lenientText, type ReportedStatus, shortText } from '../delivery-status.js';

/*
 * Mailgun's event webhooks (https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-payloads):
 * one JSON object per event, `{signature: {timestamp, token, signature}, "event-data": {...}}`,
 * signed as its routes are (verify.ts, replay.ts). The message is named by
 * `event-data.message.headers.message-id`, our Message-ID without angle brackets
 * (transport_message_id). Taken:
 * - `delivered` → delivered;
 * - `failed` with severity `permanent` → bounced when the recipient's server refused it (reason
 *   `bounce`, a suppressed bounce, or a 5xx reply), failed otherwise (Mailgun gave up: retries
 *   spent, an address suppressed after a complaint or an unsubscribe, an ESP block);
 * - `failed` with severity `temporary`: Mailgun retries, and a later event tells the outcome: no change;
 * - `complained` → complained.
 * Other events (accepted, opened, clicked, unsubscribed, ...) change nothing.
 */

const eventData = z
  .object({
    event: z.string().max(100),
    timestamp: lenientNumber,
    recipient: lenientText,
    severity: lenientText,
    reason: lenientText,
    message: z
      .object({ headers: z.object({ 'message-id': z.string().min(1).max(1000).optional() }).catchall(z.unknown()) })
      .catchall(z.unknown())
      .optional(),
    'delivery-status': z
      .object({
        code: lenientNumber,
        message: lenientText,
        description: lenientText,
      })
      .catchall(z.unknown())
      .optional(),
  })
  .catchall(z.unknown());

/** Reasons of a permanent failure that mean the recipient's side refused the mail. */
const BOUNCE_REASONS = new Set(['bounce', 'suppress-bounce']);

/** What a Mailgun event makes of the message, or undefined for events that change nothing. Pure. */
export function mailgunStatus(event: {
  event: string;
  severity?: string;
  reason?: string;
  code?: number | null;
}): ReportedStatus | undefined {
  switch (event.event) {
    case 'delivered':
      return 'delivered';
    case 'complained':
      return 'complained';
    case 'failed':
      if (event.severity !== 'permanent') return undefined;
      return BOUNCE_REASONS.has(event.reason ?? '') || (typeof event.code === 'number' && event.code >= 500 && event.code < 600)
        ? 'bounced'
        : 'failed';
    default:
      return undefined;
  }
}

/** The delivery event of one Mailgun event webhook request (none for events that change nothing); 400 when malformed. Pure. */
export function mailgunDeliveryEvents(json: unknown, now = new Date()): DeliveryEvent[] {
  const parsed = z.object({ 'event-data': eventData }).safeParse(json);
  if (!parsed.success) throw new BadRequestError('The request carries no Mailgun event-data object with an event name');
  const data = parsed.data['event-data'];
  const delivery = data['delivery-status'];
  const status = mailgunStatus({ event: data.event, severity: data.severity, reason: data.reason, code: delivery?.code });
  if (!status) return [];
  const messageId = data.message?.headers['message-id']?.trim().replace(/^<|>$/g, '');
  if (!messageId) throw new BadRequestError(`The Mailgun ${data.event} event names no message (message.headers.message-id)`);
  const words = [
    data.severity && data.reason ? `${data.severity}/${data.reason}` : data.reason,
    delivery?.code,
    delivery?.message || delivery?.description,
  ];
  return [
    {
      provider: 'mailgun',
      transportMessageIds: [messageId],
      status,
      detail: {
        provider: 'mailgun',
        event: data.event,
        recipient: shortText(data.recipient, 320),
        reason: shortText(words.filter((word) => word !== undefined && word !== null && word !== '').join(': ')),
        timestamp: isoTime(data.timestamp, now),
      },
    },
  ];
}
