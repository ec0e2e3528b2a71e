import type { InterruptedSend, OutboundMail } from '../adapters/mail/index.js';
import { NotFoundError } from '@repo/errors';
import type { ContentPool, MessageContent } from './content/index.js';
import { refuseBlockedSender } from '../lists/service.js';
import { storableMail } from './inbound-mail.js';
import { type ReceiveDeps, receiveMessage, recipientsAt } from './receive.js';
import { outboundSize } from './records.js';

export interface LocalDeliveryDeps extends ReceiveDeps {
  content: ContentPool;
}

/**
 * What the `local` provider does with a sent message: every recipient that is an inbox of this
 * service receives it as inbound mail, in the thread its headers point to (the sender's own
 * inbox too: it then keeps both the sent and the received copy). Other recipients are left
 * alone: nothing leaves the machine. Delivering the same message again stores nothing new.
 */
export async function deliverLocally(deps: LocalDeliveryDeps, mail: OutboundMail): Promise<void> {
  const addresses = localAddresses(deps, mail);
  if (addresses.length === 0) return;
  const received = await storableMail(
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
      size: outboundSize(mail),
      attachments: mail.attachments,
    },
    { domain: deps.emailDomain, receivedAt: new Date() },
  );
  const recipients = await recipientsAt(deps.db, addresses, received);
  if (recipients.length === 0) return;
  // The receive lists apply as to mail from elsewhere (lists/service.ts); a redelivery checks again.
  const refused = await refuseBlockedSender(deps.db, recipients, { from: mail.from, subject: mail.subject });
  const inboxes = recipients.filter((inbox) => !refused.has(inbox.id));
  if (inboxes.length === 0) return;
  // The same body for every recipient: cleaned once, when one of them has not received it yet.
  let cleaned: Promise<MessageContent> | undefined;
  const content = () => (cleaned ??= deps.content.cleanMessage(mail));
  for (const inbox of inboxes) {
    try {
      await receiveMessage(deps, inbox, received, content);
    } catch (error) {
      // Deleted while the message was on its way: like mail to an address that no longer exists.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
}

/**
 * How a local send that a crash interrupted ends: with no recipient here there was nothing to
 * deliver (sent); when a recipient got its copy, the transport ran and the others get theirs now
 * (sent); when none did, it did not run (not-sent), or ran into receive lists that refused it all,
 * which a second delivery does again.
 */
export async function resumeLocalDelivery(deps: LocalDeliveryDeps, mail: OutboundMail): Promise<InterruptedSend> {
  const addresses = localAddresses(deps, mail);
  if (addresses.length === 0) return 'sent';
  const inboxes = await deps.db.inbox.findMany({ where: { emailAddress: { in: addresses }, deletedAt: null } });
  if (inboxes.length === 0) return 'sent';
  const delivered = await deps.db.message.count({
    where: { inboxId: { in: inboxes.map((inbox) => inbox.id) }, direction: 'inbound', providerMessageId: mail.messageId },
  });
  if (delivered === 0) return 'not-sent';
  await deliverLocally(deps, mail);
  return 'sent';
}

/** The recipients of `mail` (to, cc, bcc) in this service's domain, lower-case, each once. */
function localAddresses(deps: LocalDeliveryDeps, mail: OutboundMail): string[] {
  const recipients = new Set([...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((address) => address.toLowerCase()));
  return [...recipients].filter((address) => address.endsWith(`@${deps.emailDomain.toLowerCase()}`));
}
