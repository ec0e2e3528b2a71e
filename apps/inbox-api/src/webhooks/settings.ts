import { type z } from 'zod';
import { setting } from '@repo/config';

/** Environment variables of the inbound webhooks: each provider's secret, and where SES keeps large mail. */
export function webhookSettings() {
  return {
    MAILGUN_WEBHOOK_SIGNING_KEY: setting
      .string()
      .optional()
      .describe(
        'Mailgun webhook signing key: `POST /webhooks/mailgun` then needs a valid signature no older than 5 minutes, and refuses the token of a request handled before (the retry of one that failed or was cut short is taken). Unset: unsigned requests are accepted (a warning at start-up).',
      ),
    SENDGRID_INBOUND_TOKEN: setting
      .string()
      .optional()
      .describe(
        'Secret of the SendGrid Inbound Parse URL: `POST /webhooks/sendgrid` then needs it as `?token=` or as the basic-auth password. Unset: open (a warning at start-up).',
      ),
    SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY: setting
      .string()
      .optional()
      .describe(
        "Verification key of SendGrid's Signed Event Webhook (the base64 ECDSA public key its settings show, or PEM): `POST /webhooks/sendgrid/events` then needs a valid X-Twilio-Email-Event-Webhook-Signature over the timestamp and the raw body (401 otherwise; its age is not limited, as a replay changes nothing). Unset: unsigned events are accepted (a warning at start-up).",
      ),
    SES_SNS_TOPIC_ARNS: setting
      .list()
      .optional()
      .describe(
        "SNS topics whose messages `POST /webhooks/ses` accepts, comma-separated; their signatures are then checked, with a certificate of the SNS endpoint of the topic's region, and messages more than an hour old refused. Unset: unsigned messages of any topic are accepted (a warning at start-up).",
      ),
    SES_S3_REGION: setting
      .string()
      .optional()
      .describe('Region of the S3 bucket where SES stores mail too large for SNS. Default: SES_REGION.'),
    SES_S3_ACCESS_KEY_ID: setting
      .string()
      .optional()
      .describe('Access key id allowed `s3:GetObject` on that bucket. Default: SES_ACCESS_KEY_ID.'),
    SES_S3_SECRET_ACCESS_KEY: setting.string().optional().describe('Its secret access key. Default: SES_SECRET_ACCESS_KEY.'),
    SES_S3_ENDPOINT: setting
      .url()
      .optional()
      .describe(
        'S3 endpoint, for S3-compatible stores (path-style requests). Default: `https://<bucket>.s3.<region>.amazonaws.com` (`https://s3.<region>.amazonaws.com/<bucket>` for a bucket name with dots).',
      ),
    TEST_SNS_URL_PREFIX: setting
      .string()
      .optional()
      .describe(
        "Tests only: SigningCertURL, SubscribeURL and UnsubscribeURL values starting with this prefix are trusted like the SNS endpoint of the topic's region. Never set in production.",
      ),
  };
}

export type WebhookSettings = z.output<z.ZodObject<ReturnType<typeof webhookSettings>>>;
