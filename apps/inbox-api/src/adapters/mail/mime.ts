import MailComposer from 'nodemailer/lib/mail-composer';
import addressparser from 'nodemailer/lib/addressparser';
import type { OutboundMail } from './interface.js';

/**
 * The RFC 5322 message, built once with nodemailer's MailComposer and sent as is by SMTP,
 * Mailgun and SES. It keeps our Message-ID, In-Reply-To and References; Bcc recipients are on
 * the envelope only, never in the headers.
 */
export function buildMime(mail: OutboundMail): Promise<Buffer> {
  const composer = new MailComposer({
    from: mail.from,
    to: mail.to,
    cc: mail.cc,
    replyTo: mail.replyTo,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    inReplyTo: mail.inReplyTo,
    references: mail.references,
    attachments: mail.attachments.map(({ filename, contentType, content }) => ({ filename, contentType, content })),
    // Attachments are bytes we hold; never let a field be read as a file path or URL to fetch.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}

export interface Mailbox {
  name: string;
  address: string;
}

/** Addresses as written (`"Name" <a@b>` or `a@b`), parsed; groups are flattened. */
export function parseMailboxes(addresses: string[]): Mailbox[] {
  return addresses.flatMap((address) => addressparser(address, { flatten: true }));
}

/** Who the message goes to, as bare addresses without duplicates: To, Cc and Bcc. */
export function envelopeRecipients(mail: OutboundMail): string[] {
  const all = parseMailboxes([...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])]).map((mailbox) => mailbox.address);
  return [...new Set(all)];
}
