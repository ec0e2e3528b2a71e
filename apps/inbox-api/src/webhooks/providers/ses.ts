import { z } from 'zod';
import { BadRequestError, ForbiddenError, UpstreamError } from '@repo/errors';
import type { Logger } from '@repo/http';
import { assertS3Object, getS3Object, type S3Location } from '../../adapters/aws/s3.js';
import type { ContentPool } from '../../messages/content/index.js';
import { sharedBytes, type WebhookBody } from '../body.js';
import type { ProviderOutcome } from '../delivery.js';
import { readMail } from '../parse.js';
import { type SnsEnvelope, snsEnvelope, type SnsVerifier } from '../sns.js';
import { verdict } from '../verdicts.js';
import { SES_DELIVERY_TYPES, sesDeliveryEvents, sesNotificationType } from './ses-events.js';

/*
 * Amazon SES receiving through SNS (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html):
 * SNS posts its envelope as text/plain JSON; a `Notification`'s Message is the SES notification
 * (JSON again), whose `content` holds the raw mail (UTF8 or BASE64, per the SNS action's
 * encoding), or, for an S3 action (mail over SNS's 150 KB), is absent and the mail is in the
 * bucket (a bucket name and key as S3 takes them, adapters/aws/s3.ts). Subscriptions are confirmed
 * by fetching SubscribeURL, on the SNS endpoint of the topic's region only (sns.ts).
 */

const verdictOf = z.object({ status: z.string() }).partial().optional();
const sesNotification = z.object({
  notificationType: z.string(),
  mail: z
    .object({ messageId: z.string().optional(), destination: z.array(z.string()).optional() })
    .partial()
    .optional(),
  receipt: z
    .object({
      recipients: z.array(z.string()).optional(),
      spamVerdict: verdictOf,
      virusVerdict: verdictOf,
      spfVerdict: verdictOf,
      dkimVerdict: verdictOf,
      dmarcVerdict: verdictOf,
      action: z
        .object({
          type: z.string(),
          encoding: z.string().optional(),
          bucketName: z.string().optional(),
          objectKey: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  content: z.string().optional(),
});

export interface SesDeps {
  sns: SnsVerifier;
  /** Whether signatures are checked (SES_SNS_TOPIC_ARNS set). */
  verifySignatures: boolean;
  /** Where S3-stored mail is read from; undefined when no region and credentials are configured. */
  s3: S3Location | undefined;
  /** The largest raw mail read from S3: as large as one posted to the webhook may be. */
  maxMailBytes: number;
  logger: Logger;
  /** Where the raw mail is parsed. */
  content: ContentPool;
}

export async function sesOutcome(body: WebhookBody, deps: SesDeps): Promise<ProviderOutcome> {
  const parsed = snsEnvelope.safeParse(body.json);
  if (!parsed.success) throw new BadRequestError('The request is not an Amazon SNS message');
  const envelope = parsed.data;
  if (deps.verifySignatures) await deps.sns.verify(envelope);
  switch (envelope.Type) {
    case 'SubscriptionConfirmation':
      return { handled: await confirmSubscription(envelope, deps) };
    case 'UnsubscribeConfirmation':
      deps.logger.warn(
        { topicArn: envelope.TopicArn, messageId: envelope.MessageId },
        'SNS unsubscribed this endpoint from a topic',
      );
      return { handled: { unsubscribed: envelope.TopicArn } };
    case 'Notification':
      return notificationOutcome(envelope, deps);
  }
}

async function confirmSubscription(envelope: SnsEnvelope, deps: SesDeps): Promise<Record<string, unknown>> {
  const url = envelope.SubscribeURL;
  if (!url || !deps.sns.isTrustedUrl(url, envelope.TopicArn, 'link')) {
    throw new ForbiddenError(
      "The SubscribeURL is not on the SNS endpoint of the topic's region; the subscription is not confirmed",
    );
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
    if (!response.ok) throw new Error(`status ${response.status}`);
  } catch (error) {
    throw new UpstreamError('The SNS subscription could not be confirmed', { details: { reason: (error as Error).message } });
  }
  deps.logger.info({ topicArn: envelope.TopicArn }, 'confirmed an SNS subscription');
  return { confirmed: envelope.TopicArn };
}

async function notificationOutcome(envelope: SnsEnvelope, deps: SesDeps): Promise<ProviderOutcome> {
  let json: unknown;
  try {
    json = JSON.parse(envelope.Message);
  } catch {
    throw new BadRequestError('The SNS message does not carry an SES notification');
  }
  const type = sesNotificationType(json);
  // Bounces, complaints and deliveries of mail sent through SES: its delivery status (ses-events.ts).
  if ((SES_DELIVERY_TYPES as readonly (string | undefined)[]).includes(type)) return { events: sesDeliveryEvents(json) };
  // Anything else SES tells (event publishing's Send, Open, Click, DeliveryDelay, Rendering Failure,
  // Subscription; a type it adds later) is answered 200 and left: refused, SNS would retry it for days.
  if (type !== undefined && type !== 'Received') {
    deps.logger.info({ notificationType: type, messageId: envelope.MessageId }, 'ignored an SES notification');
    return { handled: { ignored: type } };
  }
  const parsed = sesNotification.safeParse(json);
  if (!parsed.success) throw new BadRequestError('The SNS message does not carry an SES notification');
  const notification = parsed.data;
  const receipt = notification.receipt ?? {};
  const { mail, fallback } = await readMail(deps.content, await rawMail(notification, deps));
  return {
    delivery: {
      provider: 'ses',
      reference: notification.mail?.messageId ?? envelope.MessageId,
      mail,
      mimeFallback: fallback,
      recipients: receipt.recipients ?? notification.mail?.destination ?? [],
      verdicts: {
        spam: verdict(receipt.spamVerdict?.status),
        virus: verdict(receipt.virusVerdict?.status),
        spf: verdict(receipt.spfVerdict?.status),
        dkim: verdict(receipt.dkimVerdict?.status),
        dmarc: verdict(receipt.dmarcVerdict?.status),
      },
    },
  };
}

async function rawMail(notification: z.output<typeof sesNotification>, deps: SesDeps): Promise<Buffer> {
  const action = notification.receipt?.action;
  if (notification.content !== undefined) {
    // Decoded straight into shared memory, as body.ts joins a raw mail: the parser's worker reads it there.
    const encoding = action?.encoding?.toUpperCase() === 'BASE64' ? 'base64' : 'utf8';
    const raw = sharedBytes(Buffer.byteLength(notification.content, encoding));
    return raw.subarray(0, raw.write(notification.content, encoding));
  }
  if (action?.type === 'S3' && action.bucketName && action.objectKey) {
    const object = { bucket: action.bucketName, key: action.objectKey };
    assertS3Object(object);
    if (!deps.s3) {
      throw new UpstreamError('The mail is stored in S3, and no S3 region and credentials are configured (SES_S3_*)');
    }
    return getS3Object(deps.s3, object, { maxBytes: deps.maxMailBytes });
  }
  throw new BadRequestError('The SES notification carries no mail: no content and no S3 location');
}
