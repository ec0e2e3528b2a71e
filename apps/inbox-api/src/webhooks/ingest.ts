import { NotFoundError, ServiceUnavailableError } from '@repo/errors';
import type { Logger } from '@repo/http';
import { Counter, type Registry } from 'prom-client';
import { type ContentPool, ContentTooComplexError, fallbackContent } from '../messages/content/index.js';
import { type InboundMail, storableMail, storedSubject } from '../messages/inbound-mail.js';
import { refuseBlockedSender } from '../lists/service.js';
import { type ReceiveDeps, type ReceivedContent, receiveMessage, recipientsAt } from '../messages/receive.js';
import type { InboundDelivery } from './delivery.js';
import { authenticationOf, judge } from './verdicts.js';

/*
 * The one inbound path: every provider's webhook ends here with an InboundDelivery. The mail is
 * judged (a virus verdict drops it; spam and unauthenticated senders are labelled), routed to
 * each recipient that is an inbox of this service, cleaned once, and stored once per inbox. It is
 * never refused for its content: a body that cannot be cleaned in time gets a fallback
 * `content_clean` (fallback.ts), a source that could not be parsed is stored as it came (parse.ts).
 * The webhook answers 2xx only after this resolves, that is after every copy is committed; a
 * failure leaves nothing half-stored, and the provider's retry then stores what is missing once.
 */

export type InboundOutcome = 'stored' | 'duplicate' | 'unrouted' | 'virus' | 'blocked';

export interface InboundMetrics {
  messages: Counter<'provider' | 'outcome'>;
}

/** The counters of inbound mail, registered once per registry (an app built twice on one registry shares them). */
export function inboundMetrics(registry: Registry): InboundMetrics {
  const existing = registry.getSingleMetric('inbox_inbound_messages_total');
  if (existing) return { messages: existing as Counter<'provider' | 'outcome'> };
  return {
    messages: new Counter({
      name: 'inbox_inbound_messages_total',
      help: 'Inbound messages by provider and outcome: stored (per inbox), duplicate (a redelivery), unrouted (a recipient of our domain with no inbox), virus (dropped), blocked (per inbox whose receive lists refuse the sender)',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
    }),
  };
}

export interface IngestDeps extends ReceiveDeps {
  content: ContentPool;
  logger: Logger;
  metrics: InboundMetrics;
}

/** The webhook's answer (a type, so that it is a JSON record). */
export type IngestResult = {
  /** One entry per inbox the message was for. */
  messages: { inbox_id: string; message_id: string; thread_id: string; duplicate: boolean }[];
  /** Recipients of this service's domain that are no inbox. */
  unrouted: string[];
  /** Inboxes whose receive lists refuse the sender: nothing stored, a `message.blocked` event each. */
  blocked?: string[];
  /** Why nothing was stored, when nothing was. */
  dropped?: 'virus' | 'no_inbox';
};

export async function ingest(deps: IngestDeps, delivery: InboundDelivery): Promise<IngestResult> {
  const count = (outcome: InboundOutcome, by = 1) => deps.metrics.messages.inc({ provider: delivery.provider, outcome }, by);
  const { mail } = delivery;
  const domain = `@${deps.emailDomain.toLowerCase()}`;
  const recipients = [
    ...new Set([...delivery.recipients, ...mail.to, ...mail.cc].map((address) => address.trim().toLowerCase())),
  ];
  const ours = recipients.filter((address) => address.endsWith(domain));
  // Values the database can store and index (ids, subject, date); without a Message-ID, one
  // derived from the content still recognises the provider's redelivery.
  const stored = await storableMail(mail, { domain: deps.emailDomain, receivedAt: new Date() });
  // The inboxes with their lists and threading facts, in one statement (receive.ts).
  const inboxes = await recipientsAt(deps.db, ours, stored);
  const unrouted = ours.filter((address) => !inboxes.some((inbox) => inbox.emailAddress === address));
  if (unrouted.length > 0) count('unrouted', unrouted.length);

  const verdict = judge(delivery.verdicts);
  if (!verdict.store) {
    count('virus');
    deps.logger.warn({ provider: delivery.provider, reference: delivery.reference }, 'dropped inbound mail with a virus verdict');
    return { messages: [], unrouted, dropped: 'virus' };
  }
  if (inboxes.length === 0) {
    deps.logger.info({ provider: delivery.provider, reference: delivery.reference, recipients }, 'inbound mail for no inbox');
    return { messages: [], unrouted, dropped: 'no_inbox' };
  }
  const refused = await refuseBlockedSender(deps.db, inboxes, {
    from: mail.from,
    subject: storedSubject(mail.subject),
  });
  if (refused.size > 0) count('blocked', refused.size);
  const blocked = refused.size > 0 ? { blocked: [...refused] } : {};
  const accepted = inboxes.filter((inbox) => !refused.has(inbox.id));
  if (accepted.length === 0) return { messages: [], unrouted, ...blocked };

  const messages: IngestResult['messages'] = [];
  // Cleaned once for every inbox, and only when one of them has not received the mail before.
  let cleaned: Promise<ReceivedContent> | undefined;
  const content = () => (cleaned ??= cleanReceived(deps, delivery));
  const notes = {
    labels: verdict.labels,
    metadata: {
      authentication: { ...authenticationOf(delivery.provider, delivery.verdicts) },
      ...(delivery.mimeFallback && { mime: { ...delivery.mimeFallback } }),
    },
  };
  if (delivery.mimeFallback) {
    deps.logger.warn(
      { provider: delivery.provider, reference: delivery.reference, mime: delivery.mimeFallback },
      'inbound mail could not be parsed: stored as it came',
    );
  }
  // One transaction per copy: after a crash, the provider's retry stores the copies still missing.
  for (const inbox of accepted) {
    try {
      const { message, duplicate } = await receiveMessage(deps, inbox, stored, content, notes);
      count(duplicate ? 'duplicate' : 'stored');
      messages.push({ inbox_id: inbox.id, message_id: message.id, thread_id: message.threadId, duplicate });
      deps.crashPoint('ingest:copy-stored');
    } catch (error) {
      // Deleted since it was looked up: as if it had not existed.
      if (!(error instanceof NotFoundError)) throw error;
      count('unrouted');
      unrouted.push(inbox.emailAddress);
    }
  }
  return { messages, unrouted, ...blocked };
}

/**
 * `content_clean` and preview of a received mail. Inbound mail is never refused for its content:
 * when cleaning fails (the pool's time limit, a worker that stopped), the fallback of
 * fallback.ts, noted in `metadata.content_clean`. Only a shutdown fails it: the provider retries.
 */
async function cleanReceived(deps: IngestDeps, delivery: InboundDelivery): Promise<ReceivedContent> {
  const body: Pick<InboundMail, 'html' | 'text'> = { html: delivery.mail.html, text: delivery.mail.text };
  try {
    return await deps.content.cleanMessage(body);
  } catch (error) {
    if (error instanceof ServiceUnavailableError) throw error;
    const reason = error instanceof ContentTooComplexError ? 'timeout' : 'error';
    deps.logger.warn(
      { provider: delivery.provider, reference: delivery.reference, reason, err: error },
      'cleaning inbound mail failed: stored with a fallback content_clean',
    );
    const { contentClean, preview, source, truncated } = fallbackContent(body);
    return { contentClean, preview, metadata: { content_clean: { fallback: reason, source, truncated } } };
  }
}
