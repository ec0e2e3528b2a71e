import nodemailer, { type Transporter } from 'nodemailer';
import { UpstreamError } from '@repo/errors';
import type { NotificationMail, Notifier } from './interface.js';

/**
 * Any SMTP server, through nodemailer with a small connection pool. `url` carries host, port, TLS
 * and credentials, e.g. `smtps://user:password@smtp.example.com:465`.
 */
export class SmtpNotifier implements Notifier {
  readonly name = 'smtp';
  private readonly transporter: Transporter;

  constructor(
    url: string,
    private readonly from: string,
    options: { timeoutMs: number },
  ) {
    this.transporter = nodemailer.createTransport({
      url,
      pool: true,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
  }

  async send(mail: NotificationMail): Promise<void> {
    try {
      await this.transporter.sendMail({ ...mail, from: this.from });
    } catch (error) {
      // nodemailer's messages carry the server's reply or the network error, never the URL's credentials.
      const failure = error as { message?: string; responseCode?: number } | null;
      throw new UpstreamError(`SMTP failed: ${failure?.message ?? String(error)}`, {
        code: 'provider_error',
        details: { provider: 'smtp', ...(failure?.responseCode ? { status: failure.responseCode } : {}) },
        cause: error,
      });
    }
  }

  close(): Promise<void> {
    this.transporter.close();
    return Promise.resolve();
  }
}
