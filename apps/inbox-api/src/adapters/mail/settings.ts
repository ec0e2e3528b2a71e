import { type z } from 'zod';
import { setting } from '@repo/config';

const EMAIL_PROVIDERS = ['local', 'smtp', 'mailgun', 'sendgrid', 'ses'] as const;

/** Environment variables that choose and configure the outbound mail transport. */
export function mailSettings() {
  return {
    EMAIL_PROVIDER: setting
      .oneOf(EMAIL_PROVIDERS)
      .default('local')
      .describe(
        'How outbound mail leaves: `local` delivers to inboxes of this service and sends nothing out; the others send through that provider.',
      ),
    SMTP_URL: setting
      .url({ protocols: ['smtp:', 'smtps:'] })
      .optional()
      .describe('SMTP server of the `smtp` provider, with credentials, e.g. `smtps://user:password@smtp.example.com:465`.'),
    MAILGUN_API_KEY: setting.string().optional().describe('Mailgun API key (sent as basic auth `api:<key>`).'),
    MAILGUN_DOMAIN: setting.string().optional().describe('Mailgun sending domain, as set up in Mailgun.'),
    MAILGUN_BASE_URL: setting
      .url()
      .default('https://api.mailgun.net')
      .describe('Mailgun API base; domains in the EU region use https://api.eu.mailgun.net.'),
    SENDGRID_API_KEY: setting.string().optional().describe('SendGrid API key with Mail Send permission.'),
    SENDGRID_BASE_URL: setting
      .url()
      .default('https://api.sendgrid.com')
      .describe('SendGrid API base; EU subusers use https://api.eu.sendgrid.com.'),
    SES_REGION: setting.string().optional().describe('AWS region of Amazon SES, e.g. `eu-west-1`.'),
    SES_ACCESS_KEY_ID: setting
      .string()
      .optional()
      .describe('Access key id of an IAM user allowed `ses:SendEmail` and `ses:SendRawEmail`.'),
    SES_SECRET_ACCESS_KEY: setting.string().optional().describe('Secret access key of that IAM user.'),
    SES_ENDPOINT: setting.url().optional().describe('SES API endpoint. Default: `https://email.<SES_REGION>.amazonaws.com`.'),
  };
}

export type MailSettings = z.output<z.ZodObject<ReturnType<typeof mailSettings>>>;

const REQUIRED: Record<MailSettings['EMAIL_PROVIDER'], (keyof MailSettings)[]> = {
  local: [],
  smtp: ['SMTP_URL'],
  mailgun: ['MAILGUN_API_KEY', 'MAILGUN_DOMAIN'],
  sendgrid: ['SENDGRID_API_KEY'],
  ses: ['SES_REGION', 'SES_ACCESS_KEY_ID', 'SES_SECRET_ACCESS_KEY'],
};

/** For the app's `superRefine`: names each variable the chosen provider is missing. */
export function checkMailSettings(settings: MailSettings, ctx: z.RefinementCtx): void {
  for (const name of REQUIRED[settings.EMAIL_PROVIDER]) {
    if (settings[name] === undefined) {
      ctx.addIssue({ code: 'custom', path: [name], message: `is required when EMAIL_PROVIDER is ${settings.EMAIL_PROVIDER}` });
    }
  }
}
