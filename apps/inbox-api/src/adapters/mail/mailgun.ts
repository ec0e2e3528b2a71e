import { postToProvider } from './http.js';
import type { MailTransport, OutboundMail, SentMail } from './interface.js';
import { buildMime, envelopeRecipients } from './mime.js';

interface MailgunOptions {
  apiKey: string;
  domain: string;
  /** https://api.mailgun.net, or https://api.eu.mailgun.net for domains in the EU region. */
  baseUrl: string;
  timeoutMs: number;
}

/**
 * Mailgun's "send in MIME format" API: `POST {base}/v3/{domain}/messages.mime`, multipart form
 * with our MIME as the `message` file and every recipient (Bcc included, which the MIME leaves
 * out) as a `to` field; basic auth `api:<key>`.
 */
export class MailgunTransport implements MailTransport {
  readonly name = 'mailgun';

  constructor(private readonly options: MailgunOptions) {}

  async send(mail: OutboundMail): Promise<SentMail> {
    const form = new FormData();
    for (const recipient of envelopeRecipients(mail)) form.append('to', recipient);
    form.append('message', new Blob([await buildMime(mail)], { type: 'message/rfc822' }), 'message.mime');

    const { baseUrl, domain, apiKey, timeoutMs } = this.options;
    const response = await postToProvider('Mailgun', `${baseUrl}/v3/${encodeURIComponent(domain)}/messages.mime`, {
      headers: { authorization: `Basic ${Buffer.from(`api:${apiKey}`).toString('base64')}` },
      body: form,
      timeoutMs,
    });
    // Mailgun answers the Message-ID it sends with: ours, taken from the MIME.
    const { id } = (await response.json()) as { id?: string };
    return { messageId: id ?? mail.messageId };
  }

  async close(): Promise<void> {}
}
