import { z } from 'zod';
import { BadRequestError, UnauthorizedError } from '@repo/errors';
import type { Api } from '@repo/http';
import type { Deps } from '../deps.js';
import { type BodyLimits, readRawBody, readWebhookBody, type WebhookBody } from './body.js';
import type { InboundDelivery } from './delivery.js';
import { ingest, type IngestDeps, inboundMetrics } from './ingest.js';
import { mailgunDelivery, mailgunSignatureOf } from './providers/mailgun.js';
import { sendgridDelivery } from './providers/sendgrid.js';
import { type SesDeps, sesOutcome } from './providers/ses.js';
import { handleClaimed, refusingReplays, type ReplayToken, replayToken, requestDigest } from './replay.js';
import { type AppliedEvents, applyDeliveryEvents, type DeliveryEvent } from './delivery-status.js';
import { mailgunDeliveryEvents } from './providers/mailgun-events.js';
import {
  checkSendgridSignature,
  sendgridDeliveryEvents,
  sendgridPublicKey,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from './providers/sendgrid-events.js';
import { createSnsVerifier } from './sns.js';
import { checkMailgunSignature, checkSendgridSecret } from './verify.js';

/** The answer to a provider's delivery events (delivery-status.ts). */
const deliveryEventsFields = {
  events: z.number().int().meta({ description: 'Delivery events in the request that can change a status' }),
  matched: z.number().int().meta({ description: 'Of those, events naming a message this service sent' }),
  updated: z.number().int().meta({ description: 'Messages whose delivery_status changed' }),
};
const deliveryEventsResult = z.object(deliveryEventsFields).meta({ id: 'DeliveryEventsResult' });

const webhookResult = z
  .object({
    messages: z
      .array(z.object({ inbox_id: z.string(), message_id: z.string(), thread_id: z.string(), duplicate: z.boolean() }))
      .optional(),
    unrouted: z.array(z.string()).optional(),
    blocked: z.array(z.string()).optional().meta({
      description: 'Inboxes whose receive lists refuse the sender: nothing was stored for them (a `message.blocked` event each)',
    }),
    dropped: z.enum(['virus', 'no_inbox']).optional(),
    ...z.object(deliveryEventsFields).partial().shape,
  })
  .catchall(z.unknown())
  .meta({ id: 'WebhookResult' });

const DESCRIPTION =
  'Called by the provider, not by API clients. Answers 200 once the message is stored in every inbox it is addressed ' +
  'to (a redelivery stores nothing new); mail for addresses with no inbox is answered 200 too, so that the provider stops retrying.';

/** The three inbound webhooks (contract.md): paths are not versioned, and need no API key (each provider authenticates its own way). */
export function webhookRoutes(api: Api, deps: Deps, rawBodyApi: Api): void {
  const { config } = deps;
  const ingestDeps: IngestDeps = {
    ...deps,
    emailDomain: config.INBOX_EMAIL_DOMAIN,
    leaseSeconds: config.INBOX_SEND_LEASE_SECONDS,
    inlineMaxBytes: config.INBOX_INLINE_ATTACHMENT_BYTES,
    metrics: inboundMetrics(deps.metrics.registry),
  };
  // Raw MIME carries attachments base64-encoded (4 bytes per 3), besides the text.
  const limits: BodyLimits = { totalBytes: Math.ceil((config.INBOX_MAX_ATTACHMENT_BYTES * 4) / 3) + 5 * 1024 * 1024, files: 100 };
  const sesDeps: SesDeps = {
    sns: createSnsVerifier({ topicArns: config.SES_SNS_TOPIC_ARNS ?? [], trustedUrlPrefix: config.TEST_SNS_URL_PREFIX }),
    verifySignatures: config.SES_SNS_TOPIC_ARNS !== undefined,
    s3: s3Location(config),
    maxMailBytes: limits.totalBytes,
    logger: deps.logger,
    content: deps.content,
  };
  warnWhenOpen(deps);
  const store = (delivery: InboundDelivery) => ingest(ingestDeps, delivery);

  api.route({
    method: 'post',
    path: '/webhooks/sendgrid',
    summary: 'Inbound mail from SendGrid Inbound Parse (parsed fields or raw MIME)',
    description: `${DESCRIPTION} With SENDGRID_INBOUND_TOKEN set, the URL carries it as \`?token=\` or as the basic-auth password (401 otherwise).`,
    tags: ['webhooks'],
    query: z.object({ token: z.string().optional() }),
    response: webhookResult,
    errors: [401, 413, 415],
    handler: async ({ req, query }) => {
      const secret = config.SENDGRID_INBOUND_TOKEN;
      if (secret && !checkSendgridSecret({ queryToken: query.token, authorization: req.get('authorization') }, secret)) {
        throw new UnauthorizedError('Missing or wrong SendGrid webhook secret (?token= or basic auth)');
      }
      return store(await sendgridDelivery(await readWebhookBody(req, limits, deps.content), deps.content));
    },
  });

  api.route({
    method: 'post',
    path: '/webhooks/mailgun',
    summary: 'Inbound mail from a Mailgun route (parsed fields or body-mime)',
    description: `${DESCRIPTION} With MAILGUN_WEBHOOK_SIGNING_KEY set, the request needs a valid signature of the last 5 minutes whose token no handled request, and no request with other fields, used before (401 otherwise; the retry of a request that failed or was cut short is no replay).`,
    tags: ['webhooks'],
    response: webhookResult,
    errors: [401, 413, 415],
    handler: async ({ req }) => {
      const body = await readWebhookBody(req, limits, deps.content);
      const key = config.MAILGUN_WEBHOOK_SIGNING_KEY;
      if (!key) return store(await mailgunDelivery(body, deps.content));
      const claim = { token: signedMailgunToken(body, key), digest: await requestDigest(body) };
      return handleClaimed(deps.db, claim, async () => store(await mailgunDelivery(body, deps.content)));
    },
  });

  // Also under the path of the other providers' delivery events, for an SNS subscription kept for them.
  for (const path of ['/webhooks/ses', '/webhooks/ses/events'] as const) {
    api.route({
      method: 'post',
      path,
      summary:
        'Inbound mail, and bounces, complaints and deliveries of sent mail, from Amazon SES through Amazon SNS' +
        (path === '/webhooks/ses' ? '' : ' (the same as POST /webhooks/ses)'),
      description:
        `${DESCRIPTION} Bounce, Complaint and Delivery notifications (and event publishing's Reject) of mail sent through ` +
        'SES update the message whose SES MessageId they name (delivery_status, delivery_detail, and an event), answering ' +
        '`{events, matched, updated}`; notifications of unknown messages are answered 200 and change nothing. ' +
        `SubscriptionConfirmation is confirmed by fetching its SubscribeURL (on the SNS endpoint of the ` +
        "topic's region only, 403 otherwise). With SES_SNS_TOPIC_ARNS set, messages of other topics are refused (403); " +
        'signatures are checked with a certificate from that endpoint which names SNS, and messages more than an hour old are refused (401).',
      tags: ['webhooks'],
      response: webhookResult,
      errors: [401, 403, 413, 415, 502],
      handler: async ({ req }) => {
        const outcome = await sesOutcome(await readWebhookBody(req, limits, deps.content), sesDeps);
        if ('handled' in outcome) return outcome.handled;
        if ('events' in outcome) return deliveryResult(await applyDeliveryEvents(deps.db, outcome.events));
        return store(outcome.delivery);
      },
    });
  }

  // Delivery events are small JSON (SendGrid batches up to about 768 KB).
  const eventLimits: BodyLimits = { totalBytes: 2 * 1024 * 1024, files: 0 };
  const applyEvents = async (events: DeliveryEvent[], replayToken?: ReplayToken) =>
    deliveryResult(await applyDeliveryEvents(deps.db, events, replayToken));

  api.route({
    method: 'post',
    path: '/webhooks/mailgun/events',
    summary: "Delivery events of sent mail from Mailgun's event webhooks",
    description:
      'Called by Mailgun, not by API clients: configure it as the URL of the `delivered`, `permanent_fail`, ' +
      '`temporary_fail` and `complained` webhooks. The message named by `event-data.message.headers.message-id` moves ' +
      "to delivered, bounced (a permanent failure the recipient's server caused), failed (other permanent failures) or " +
      'complained, forward only, with an event; temporary failures and other events change nothing. Answers ' +
      '`{events, matched, updated}`, 200 also for messages this service did not send. With MAILGUN_WEBHOOK_SIGNING_KEY ' +
      'set, signed as the inbound route is: a valid signature of the last 5 minutes whose token no handled request used (401 otherwise).',
    tags: ['webhooks'],
    response: deliveryEventsResult,
    errors: [400, 401, 413, 415],
    handler: async ({ req }) => {
      const body = await readWebhookBody(req, eventLimits, deps.content);
      const key = config.MAILGUN_WEBHOOK_SIGNING_KEY;
      if (!key) return applyEvents(mailgunDeliveryEvents(body.json));
      const token = signedMailgunToken(body, key);
      const events = mailgunDeliveryEvents(body.json);
      return refusingReplays(() => applyEvents(events, token));
    },
  });

  const sendgridKey = config.SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY
    ? sendgridPublicKey(config.SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY)
    : undefined;
  // Signed over the raw body: read before the JSON parser (app.ts).
  rawBodyApi.route({
    method: 'post',
    path: '/webhooks/sendgrid/events',
    summary: "Delivery events of sent mail from SendGrid's Event Webhook",
    description:
      'Called by SendGrid, not by API clients: its Event Webhook posts a JSON array of events (one event alone is ' +
      "taken too). The message named by each event's `sg_message_id` (the X-Message-Id of the send, a dot and " +
      "SendGrid's suffix) moves to delivered (`delivered`), bounced (`bounce`, of type bounce or blocked), failed " +
      '(`dropped`) or complained (`spamreport`), forward only, with an event; other events, and elements that are no ' +
      'event, change nothing. Answers `{events, matched, updated}`, 200 also for messages this service did not send. ' +
      'With SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY set, the request needs a valid X-Twilio-Email-Event-Webhook-Signature ' +
      '(ECDSA over the X-Twilio-Email-Event-Webhook-Timestamp and the raw body; 401 otherwise). Its age is not ' +
      'limited: a replay changes nothing, since each event applies once.',
    tags: ['webhooks'],
    response: deliveryEventsResult,
    errors: [400, 401, 413],
    handler: async ({ req }) => {
      const body = await readRawBody(req, eventLimits.totalBytes);
      if (sendgridKey) {
        const check = checkSendgridSignature(
          { signature: req.get(SIGNATURE_HEADER), timestamp: req.get(TIMESTAMP_HEADER), body },
          { publicKey: sendgridKey },
        );
        if (!check.valid) throw new UnauthorizedError(check.reason);
      }
      return applyEvents(sendgridDeliveryEvents(jsonOf(body)));
    },
  });
}

/** The request's token, once its signature is valid (401 otherwise); whether it was used before, replay.ts tells. */
function signedMailgunToken(body: WebhookBody, key: string): ReplayToken {
  const signature = mailgunSignatureOf(body);
  if (!signature) throw new UnauthorizedError('The Mailgun signature (timestamp, token, signature) is missing');
  const check = checkMailgunSignature(signature, { signingKey: key, now: new Date() });
  if (!check.valid) throw new UnauthorizedError(check.reason);
  return replayToken(signature.token, Number(signature.timestamp));
}

/** A raw body as JSON; 400 when it is not UTF-8 JSON. */
function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown;
  } catch {
    throw new BadRequestError('The request body is not JSON (UTF-8)');
  }
}

/** The answer to a provider's delivery events. */
function deliveryResult(applied: AppliedEvents): { events: number; matched: number; updated: number } {
  return { events: applied.received, matched: applied.matched, updated: applied.updated.length };
}

function s3Location(config: Deps['config']): SesDeps['s3'] {
  const region = config.SES_S3_REGION ?? config.SES_REGION;
  const accessKeyId = config.SES_S3_ACCESS_KEY_ID ?? config.SES_ACCESS_KEY_ID;
  const secretAccessKey = config.SES_S3_SECRET_ACCESS_KEY ?? config.SES_SECRET_ACCESS_KEY;
  if (!region || !accessKeyId || !secretAccessKey) return undefined;
  return { region, credentials: { accessKeyId, secretAccessKey }, endpoint: config.SES_S3_ENDPOINT };
}

function warnWhenOpen({ config, logger }: Deps): void {
  const open = [
    !config.SENDGRID_INBOUND_TOKEN && '/webhooks/sendgrid (set SENDGRID_INBOUND_TOKEN)',
    !config.MAILGUN_WEBHOOK_SIGNING_KEY && '/webhooks/mailgun (set MAILGUN_WEBHOOK_SIGNING_KEY)',
    !config.SES_SNS_TOPIC_ARNS && '/webhooks/ses (set SES_SNS_TOPIC_ARNS)',
    !config.SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY && '/webhooks/sendgrid/events (set SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY)',
  ].filter(Boolean);
  if (open.length > 0) logger.warn({ webhooks: open }, 'inbound webhooks accept unsigned requests: anyone can post mail to them');
}
