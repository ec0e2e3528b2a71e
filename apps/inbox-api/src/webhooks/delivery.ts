import type { InboundMail } from '../messages/inbound-mail.js';
import type { DeliveryEvent } from './delivery-status.js';
import type { MimeFallback } from './parse.js';
import type { Verdicts } from './verdicts.js';

export type Provider = 'sendgrid' | 'mailgun' | 'ses';

/** One e-mail as a provider's webhook delivers it: what ingest.ts needs, whichever provider it came from. */
export interface InboundDelivery {
  provider: Provider;
  /** The provider's id of the delivery, for logs (SES and SNS message ids, Mailgun's token). */
  reference?: string;
  mail: InboundMail;
  /** Envelope recipients (RCPT TO), which may differ from To and Cc (Bcc, forwarding). */
  recipients: string[];
  verdicts: Verdicts;
  /** Set when the raw mail could not be parsed and is stored as it came (parse.ts); kept in `metadata.mime`. */
  mimeFallback?: MimeFallback;
}

/**
 * What a provider's request comes to: an e-mail to store, delivery events of mail we sent
 * (delivery-status.ts), or a request the provider module has answered itself.
 */
export type ProviderOutcome = { delivery: InboundDelivery } | { events: DeliveryEvent[] } | { handled: Record<string, unknown> };
