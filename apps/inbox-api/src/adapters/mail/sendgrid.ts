import { callProvider } from '../http.js';
import type { MailTransport, OutboundMail, SentMail } from './interface.js';
import { type Mailbox, parseMailboxes } from './mime.js';

interface SendGridOptions {
  apiKey: string;
  /** https://api.sendgrid.com, or https://api.eu.sendgrid.com for EU subusers. */
  baseUrl: string;
  timeoutMs: number;
}

type SendGridAddress = { email: string; name?: string };

/**
 * SendGrid's v3 Mail Send API: `POST {base}/v3/mail/send` with the message as JSON (SendGrid
 * builds the MIME itself) and `Authorization: Bearer <key>`. Our Message-ID and the threading
 * headers travel in `headers`, which SendGrid copies into the message.
 */
export class SendGridTransport implements MailTransport {
  readonly name = 'sendgrid';

  constructor(private readonly options: SendGridOptions) {}

  async send(mail: OutboundMail): Promise<SentMail> {
    const { baseUrl, apiKey, timeoutMs } = this.options;
    const response = await callProvider('SendGrid', `${baseUrl}/v3/mail/send`, {
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(mailSendRequest(mail)),
      timeoutMs,
    });
    // The Event Webhook's sg_message_id is this id followed by a dot and SendGrid's suffix.
    const transportMessageId = response.headers.get('x-message-id') ?? undefined;
    return { messageId: mail.messageId, ...(transportMessageId && { transportMessageId }) };
  }

  async close(): Promise<void> {}
}

/** The Mail Send request body for one message. */
function mailSendRequest(mail: OutboundMail) {
  // SendGrid refuses an address that appears twice among to, cc and bcc, and empty lists.
  const seen = new Set<string>();
  const unique = (addresses: string[] | undefined) =>
    parseMailboxes(addresses ?? [])
      .filter(({ address }) => !seen.has(address.toLowerCase()) && seen.add(address.toLowerCase()))
      .map(toSendGrid);
  const to = unique(mail.to);
  const cc = unique(mail.cc);
  const bcc = unique(mail.bcc);
  const replyTo = parseMailboxes(mail.replyTo ?? []).map(toSendGrid);
  const headers: Record<string, string> = { 'Message-ID': mail.messageId };
  if (mail.inReplyTo) headers['In-Reply-To'] = mail.inReplyTo;
  if (mail.references?.length) headers.References = mail.references.join(' ');

  return {
    personalizations: [{ to, ...(cc.length ? { cc } : {}), ...(bcc.length ? { bcc } : {}) }],
    from: toSendGrid(parseMailboxes([mail.from])[0]!),
    ...(replyTo.length === 1 ? { reply_to: replyTo[0] } : replyTo.length > 1 ? { reply_to_list: replyTo } : {}),
    subject: mail.subject,
    // text/plain must come first; SendGrid refuses empty values.
    content: [{ type: 'text/plain', value: mail.text || ' ' }, ...(mail.html ? [{ type: 'text/html', value: mail.html }] : [])],
    ...(mail.attachments.length
      ? {
          attachments: mail.attachments.map((file) => ({
            content: file.content.toString('base64'),
            type: file.contentType,
            filename: file.filename,
            disposition: 'attachment',
          })),
        }
      : {}),
    headers,
  };
}

function toSendGrid(mailbox: Mailbox): SendGridAddress {
  return mailbox.name ? { email: mailbox.address, name: mailbox.name } : { email: mailbox.address };
}
