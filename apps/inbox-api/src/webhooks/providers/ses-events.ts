import { z } from 'zod';
import { BadRequestError } from '@repo/errors';
import { type DeliveryEvent, isoTime, MAX_EVENTS, type ReportedStatus, shortText } from '../delivery-status.js';

/*
 * Amazon SES bounce, complaint and delivery notifications of mail sent through SES, as SNS posts
 * them to /webhooks/ses (https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html):
 * `notificationType` (`eventType` when they come from event publishing, which adds `Reject`) with
 * a `bounce`, `complaint` or `delivery` object, and `mail.messageId`, the id SES answered the send
 * with (transport_message_id). One event per recipient the notification names.
 */

const recipient = z.object({ emailAddress: z.string().optional() }).catchall(z.unknown());
const sesMail = z.object({ messageId: z.string().min(1).max(1000) }).catchall(z.unknown());

const bounce = z
  .object({
    bounceType: z.string().optional(),
    bounceSubType: z.string().optional(),
    bouncedRecipients: z
      .array(recipient.extend({ diagnosticCode: z.string().optional(), status: z.string().optional() }))
      .max(MAX_EVENTS),
    timestamp: z.string().optional(),
  })
  .catchall(z.unknown());
const complaint = z
  .object({
    complainedRecipients: z.array(recipient).max(MAX_EVENTS),
    complaintFeedbackType: z.string().optional(),
    complaintSubType: z.string().nullable().optional(),
    timestamp: z.string().optional(),
  })
  .catchall(z.unknown());
const delivery = z
  .object({
    recipients: z.array(z.string()).max(MAX_EVENTS),
    smtpResponse: z.string().optional(),
    timestamp: z.string().optional(),
  })
  .catchall(z.unknown());
const reject = z.object({ reason: z.string().optional() }).catchall(z.unknown());

/** The notification types of mail SES sent (the others, `Received` among them, are inbound mail or not ours to track). */
export const SES_DELIVERY_TYPES = ['Bounce', 'Complaint', 'Delivery', 'Reject'] as const;

/** The type of an SES notification: `notificationType`, or `eventType` for event publishing. */
export function sesNotificationType(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { notificationType, eventType } = json as { notificationType?: unknown; eventType?: unknown };
  const type = notificationType ?? eventType;
  return typeof type === 'string' ? type : undefined;
}

/** The delivery events of one SES notification of mail it sent; 400 when it is not one. Pure. */
export function sesDeliveryEvents(json: unknown, now = new Date()): DeliveryEvent[] {
  const type = sesNotificationType(json);
  const notification = z
    .object({
      mail: sesMail,
      bounce: bounce.optional(),
      complaint: complaint.optional(),
      delivery: delivery.optional(),
      reject: reject.optional(),
    })
    .safeParse(json);
  const invalid = () => new BadRequestError(`The SES ${type ?? ''} notification is not as SES sends it`.replace('  ', ' '));
  if (!notification.success) throw invalid();
  const { mail } = notification.data;
  const event = (status: ReportedStatus, to: string | undefined, reason: string | null, at: string | undefined) => ({
    provider: 'ses' as const,
    transportMessageIds: [mail.messageId],
    status,
    detail: { provider: 'ses', event: type!, recipient: shortText(to, 320), reason, timestamp: isoTime(at, now) },
  });
  switch (type) {
    case 'Bounce': {
      const data = notification.data.bounce;
      if (!data) throw invalid();
      const kind = [data.bounceType, data.bounceSubType].filter(Boolean).join('/');
      return data.bouncedRecipients.map((to) =>
        event(
          'bounced',
          to.emailAddress,
          shortText([kind, to.diagnosticCode ?? to.status].filter(Boolean).join(': ')),
          data.timestamp,
        ),
      );
    }
    case 'Complaint': {
      const data = notification.data.complaint;
      if (!data) throw invalid();
      const reason = shortText(data.complaintFeedbackType ?? data.complaintSubType ?? undefined);
      return data.complainedRecipients.map((to) => event('complained', to.emailAddress, reason, data.timestamp));
    }
    case 'Delivery': {
      const data = notification.data.delivery;
      if (!data) throw invalid();
      return data.recipients.map((to) => event('delivered', to, shortText(data.smtpResponse), data.timestamp));
    }
    case 'Reject':
      // Event publishing only: SES refused to send it (a virus); it names no recipient.
      return [event('failed', undefined, shortText(notification.data.reject?.reason ?? 'Rejected by SES'), undefined)];
    default:
      throw invalid();
  }
}
