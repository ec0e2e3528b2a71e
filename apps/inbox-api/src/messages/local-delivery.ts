import type { OutboundMail } from '../adapters/mail/index.js';
import { messageContent } from './content.js';
import { type ReceiveDeps, receiveMessage } from './receive.js';
import { outboundSize } from './records.js';

/**
 * What the `local` provider does with a sent message: every recipient that is an inbox of this
 * service receives it as inbound mail, in the thread its headers point to. Other recipients are
 * left alone: nothing leaves the machine.
 */
export async function deliverLocally(deps: ReceiveDeps, mail: OutboundMail): Promise<void> {
  const recipients = new Set([...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((address) => address.toLowerCase()));
  const local = [...recipients].filter((address) => address.endsWith(`@${deps.emailDomain.toLowerCase()}`));
  if (local.length === 0) return;
  const inboxes = await deps.db.inbox.findMany({ where: { emailAddress: { in: local } } });
  if (inboxes.length === 0) return;
  const size = outboundSize(mail);
  // The same body for every recipient: cleaned once.
  const content = messageContent(mail);
  for (const inbox of inboxes) {
    await receiveMessage(
      deps,
      inbox,
      {
        from: mail.from,
        to: mail.to,
        cc: mail.cc ?? [],
        replyTo: mail.replyTo ?? [],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
        inReplyTo: mail.inReplyTo,
        references: mail.references?.join(' '),
        date: new Date(),
        size,
        attachments: mail.attachments,
      },
      content,
    );
  }
}
