import type { InterruptedSend, MailTransport, OutboundMail, SentMail } from './interface.js';

export interface LocalDelivery {
  deliver(mail: OutboundMail): Promise<void>;
  /** Finishes an interrupted delivery if it had begun, else says it never did (see resumeLocalDelivery). */
  resume(mail: OutboundMail): Promise<InterruptedSend>;
}

/**
 * Sends nothing out: hands each message to the app's delivery to its own inboxes (mail to other
 * addresses goes nowhere). The default, so that the service runs with no provider.
 */
export class LocalTransport implements MailTransport {
  readonly name = 'local';

  constructor(private readonly delivery: LocalDelivery) {}

  async send(mail: OutboundMail): Promise<SentMail> {
    await this.delivery.deliver(mail);
    return { messageId: mail.messageId };
  }

  async resolveInterrupted(send: { mail: () => Promise<OutboundMail> }): Promise<InterruptedSend> {
    return this.delivery.resume(await send.mail());
  }

  async close(): Promise<void> {}
}
