import { callProvider } from '../http.js';
import type { MailTransport, OutboundMail, SentMail } from './interface.js';
import { buildMime, parseMailboxes } from './mime.js';
import { type AwsCredentials, signAwsRequest } from '../aws/sigv4.js';

interface SesOptions {
  region: string;
  credentials: AwsCredentials;
  /** Default: https://email.<region>.amazonaws.com */
  endpoint?: string;
  timeoutMs: number;
}

/**
 * Amazon SES API v2 SendEmail with raw content: `POST /v2/email/outbound-emails`, our MIME
 * base64-encoded in `Content.Raw.Data`, the recipients (Bcc included) in `Destination`, signed
 * with AWS Signature Version 4 (`sigv4.ts`).
 */
export class SesTransport implements MailTransport {
  readonly name = 'ses';
  private readonly endpoint: string;

  constructor(private readonly options: SesOptions) {
    this.endpoint = options.endpoint ?? `https://email.${options.region}.amazonaws.com`;
  }

  async send(mail: OutboundMail): Promise<SentMail> {
    const addresses = (list: string[] | undefined) => parseMailboxes(list ?? []).map((mailbox) => mailbox.address);
    const [to, cc, bcc] = [addresses(mail.to), addresses(mail.cc), addresses(mail.bcc)];
    const body = JSON.stringify({
      Destination: { ToAddresses: to, ...(cc.length ? { CcAddresses: cc } : {}), ...(bcc.length ? { BccAddresses: bcc } : {}) },
      Content: { Raw: { Data: (await buildMime(mail)).toString('base64') } },
    });
    const url = `${this.endpoint}/v2/email/outbound-emails`;
    const headers = signAwsRequest(
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
      { credentials: this.options.credentials, region: this.options.region, service: 'ses' },
    );
    const response = await callProvider('Amazon SES', url, { headers, body, timeoutMs: this.options.timeoutMs });
    const { MessageId } = (await response.json()) as { MessageId: string };
    return { messageId: sesMessageId(MessageId, this.options.region), transportMessageId: MessageId };
  }

  async close(): Promise<void> {}
}

/**
 * SES replaces the Message-ID header with one made of the id it answers and its own domain
 * (`email.amazonses.com` in us-east-1, `<region>.amazonses.com` elsewhere); replies refer to that.
 */
function sesMessageId(id: string, region: string): string {
  return `<${id}@${region === 'us-east-1' ? 'email' : region}.amazonses.com>`;
}
