import type { MailTransport, OutboundMail } from './interface.js';
import { LocalTransport } from './local.js';
import { MailgunTransport } from './mailgun.js';
import { SendGridTransport } from './sendgrid.js';
import { SesTransport } from './ses.js';
import type { MailSettings } from './settings.js';
import { SmtpTransport } from './smtp.js';

export type { MailTransport, OutboundMail, SentMail } from './interface.js';
export { checkMailSettings, mailSettings, type MailSettings } from './settings.js';

/** How long one provider request (or SMTP step) may take before the send fails. */
const TIMEOUT_MS = 30_000;

/**
 * The transport EMAIL_PROVIDER chooses. `deliverLocally` is the `local` transport's delivery to
 * this service's own inboxes. Expects settings that passed `checkMailSettings`.
 */
export function createMailTransport(
  settings: MailSettings,
  options: { deliverLocally: (mail: OutboundMail) => Promise<void>; timeoutMs?: number },
): MailTransport {
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const required = (name: keyof MailSettings): string => {
    const value = settings[name];
    if (value === undefined) throw new Error(`${name} is required when EMAIL_PROVIDER is ${settings.EMAIL_PROVIDER}`);
    return value;
  };
  switch (settings.EMAIL_PROVIDER) {
    case 'local':
      return new LocalTransport(options.deliverLocally);
    case 'smtp':
      return new SmtpTransport(required('SMTP_URL'), { timeoutMs });
    case 'mailgun':
      return new MailgunTransport({
        apiKey: required('MAILGUN_API_KEY'),
        domain: required('MAILGUN_DOMAIN'),
        baseUrl: settings.MAILGUN_BASE_URL,
        timeoutMs,
      });
    case 'sendgrid':
      return new SendGridTransport({ apiKey: required('SENDGRID_API_KEY'), baseUrl: settings.SENDGRID_BASE_URL, timeoutMs });
    case 'ses':
      return new SesTransport({
        region: required('SES_REGION'),
        credentials: { accessKeyId: required('SES_ACCESS_KEY_ID'), secretAccessKey: required('SES_SECRET_ACCESS_KEY') },
        endpoint: settings.SES_ENDPOINT,
        timeoutMs,
      });
  }
}
