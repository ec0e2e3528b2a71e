import { callProvider } from '../http.js';
import type { InterruptedSend, MailTransport, OutboundMail, SentMail } from './interface.js';
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
 * out) as a `to` field; basic auth `api:<key>`. After a crash, its Events API tells whether it
 * accepted a message.
 */
export class MailgunTransport implements MailTransport {
  readonly name = 'mailgun';

  constructor(private readonly options: MailgunOptions) {}

  async send(mail: OutboundMail): Promise<SentMail> {
    const form = new FormData();
    for (const recipient of envelopeRecipients(mail)) form.append('to', recipient);
    form.append('message', new Blob([await buildMime(mail)], { type: 'message/rfc822' }), 'message.mime');

    const response = await callProvider('Mailgun', `${this.domainUrl}/messages.mime`, {
      headers: this.headers,
      body: form,
      timeoutMs: this.options.timeoutMs,
    });
    // Mailgun answers the Message-ID it sends with: ours, taken from the MIME.
    const { id } = (await response.json()) as { id?: string };
    const messageId = id ?? mail.messageId;
    // Its events name the message by this id without the angle brackets.
    return { messageId, transportMessageId: messageId.replace(/^<|>$/g, '') };
  }

  /**
   * `GET {base}/v3/{domain}/events?message-id=...&event=accepted`: Mailgun records an `accepted`
   * event for every message it took (kept at least three days). A failed look-up throws, so that
   * the send is looked at again later rather than judged on no answer.
   */
  async resolveInterrupted(send: { messageId: string }): Promise<InterruptedSend> {
    const query = new URLSearchParams({
      'message-id': send.messageId.replace(/^<|>$/g, ''),
      event: 'accepted',
      // Newest first from now: Mailgun wants a direction when no end time is given.
      ascending: 'no',
      limit: '1',
    });
    const response = await callProvider('Mailgun', `${this.domainUrl}/events?${query.toString()}`, {
      method: 'GET',
      headers: this.headers,
      timeoutMs: this.options.timeoutMs,
    });
    const { items } = (await response.json()) as { items?: unknown[] };
    return items && items.length > 0 ? 'sent' : 'unknown';
  }

  async close(): Promise<void> {}

  private get domainUrl(): string {
    return `${this.options.baseUrl}/v3/${encodeURIComponent(this.options.domain)}`;
  }

  private get headers(): Record<string, string> {
    return { authorization: `Basic ${Buffer.from(`api:${this.options.apiKey}`).toString('base64')}` };
  }
}
