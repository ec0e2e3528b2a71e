import type { MailTransport, OutboundMail, SentMail } from './interface.js';

/**
 * Sends nothing out: hands each message to `deliver`, which the app points at its own inboxes
 * (mail to other addresses goes nowhere). The default, so that the service runs with no provider.
 */
export class LocalTransport implements MailTransport {
  readonly name = 'local';

  constructor(private readonly deliver: (mail: OutboundMail) => Promise<void>) {}

  async send(mail: OutboundMail): Promise<SentMail> {
    await this.deliver(mail);
    return { messageId: mail.messageId };
  }

  async close(): Promise<void> {}
}
