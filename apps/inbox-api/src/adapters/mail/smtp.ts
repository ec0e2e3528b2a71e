import nodemailer, { type Transporter } from 'nodemailer';
import { UpstreamError } from '@repo/errors';
import type { MailTransport, OutboundMail, SentMail } from './interface.js';
import { buildMime, envelopeRecipients, parseMailboxes } from './mime.js';

/**
 * Any SMTP server, through nodemailer with a small connection pool. `url` carries host, port,
 * TLS and credentials, e.g. `smtps://user:password@smtp.example.com:465`.
 */
export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly transporter: Transporter;

  constructor(url: string, options: { timeoutMs: number }) {
    this.transporter = nodemailer.createTransport({
      url,
      pool: true,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
  }

  async send(mail: OutboundMail): Promise<SentMail> {
    const raw = await buildMime(mail);
    const [sender] = parseMailboxes([mail.from]);
    try {
      await this.transporter.sendMail({ envelope: { from: sender?.address, to: envelopeRecipients(mail) }, raw });
    } catch (error) {
      // nodemailer's messages carry the server's reply ("550 5.7.1 Relaying denied") or the
      // network error, never the credentials of the URL.
      const failure = error as { message?: string; responseCode?: number } | null;
      throw new UpstreamError(`SMTP failed: ${failure?.message ?? String(error)}`, {
        code: 'provider_error',
        details: { provider: 'smtp', ...(failure?.responseCode ? { status: failure.responseCode } : {}) },
        cause: error,
      });
    }
    return { messageId: mail.messageId };
  }

  close(): Promise<void> {
    this.transporter.close();
    return Promise.resolve();
  }
}
