import type { MailTransport } from './interface.js';
import { type LocalDelivery, LocalTransport } from './local.js';
import { MailgunTransport } from './mailgun.js';
import { SendGridTransport } from './sendgrid.js';
import { SesTransport } from './ses.js';
import type { MailSettings } from './settings.js';
import { SmtpTransport } from './smtp.js';

export type { InterruptedSend, MailTransport, MailTransportName, OutboundMail, SentMail } from './interface.js';
export type { LocalDelivery } from './local.js';
export { checkMailSettings, mailSettings, type MailSettings } from './settings.js';

/** How long one provider request (or SMTP step) may take before the send fails. */
export const SEND_TIMEOUT_MS = 30_000;

/**
 * The transport EMAIL_PROVIDER chooses. `localDelivery` is the `local` transport's delivery to
 * this service's own inboxes. Expects settings that passed `checkMailSettings`.
 */
export function createMailTransport(
  settings: MailSettings,
  options: { localDelivery: LocalDelivery; timeoutMs?: number },
): MailTransport {
  const timeoutMs = options.timeoutMs ?? SEND_TIMEOUT_MS;
  const required = (name: keyof MailSettings): string => {
    const value = settings[name];
    if (value === undefined) throw new Error(`${name} is required when EMAIL_PROVIDER is ${settings.EMAIL_PROVIDER}`);
    return value;
  };
  switch (settings.EMAIL_PROVIDER) {
    case 'local':
      return new LocalTransport(options.localDelivery);
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
