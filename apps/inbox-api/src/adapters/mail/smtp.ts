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
    let reply: string | undefined;
    try {
      const info = (await this.transporter.sendMail({
        envelope: { from: sender?.address, to: envelopeRecipients(mail) },
        raw,
      })) as {
        response?: unknown;
      };
      reply = typeof info.response === 'string' ? info.response : undefined;
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
    const transportMessageId = smtpQueueId(reply);
    return { messageId: mail.messageId, ...(transportMessageId && { transportMessageId }) };
  }

  close(): Promise<void> {
    this.transporter.close();
    return Promise.resolve();
  }
}

/**
 * The queue id in an SMTP server's reply to DATA, when it names one: Postfix's `250 2.0.0 Ok:
 * queued as 4BqD3x1XyZz`, Exim's `250 OK id=1rXyZ-000Abc-De`, others' `queued as <id>`. Pure.
 */
export function smtpQueueId(reply: string | undefined): string | undefined {
  const match = /\bqueued as <?([\w.@-]{1,200})>?|\bid=([\w.@-]{1,200})/i.exec(reply ?? '');
  return match?.[1] ?? match?.[2];
}
