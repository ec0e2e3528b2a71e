import { randomUUID } from 'node:crypto';

/**
 * Threading rules (RFC 5322 §3.6.4): how outbound replies are linked to their thread and how
 * inbound mail finds the thread it belongs to. Pure functions.
 */

/** References headers grow with every reply; past this many ids keep the first and the newest. */
const MAX_REFERENCES = 20;

/** A new Message-ID in our domain: `<uuid@domain>`. */
export function newMessageId(domain: string): string {
  return `<${randomUUID()}@${domain}>`;
}

/** The Message-IDs (`<...>`) in a header value such as References, in order, without duplicates. */
export function parseMessageIds(header: string | null | undefined): string[] {
  const ids = header?.match(/<[^<>\s]+>/g) ?? [];
  return [...new Set(ids)];
}

/**
 * Headers of a reply to `latest`, the newest message of the thread: In-Reply-To is its
 * Message-ID; References is its References followed by its Message-ID.
 */
export function replyHeaders(latest: { providerMessageId: string; references: string | null }): {
  inReplyTo: string;
  references: string[];
} {
  const chain = [...parseMessageIds(latest.references).filter((id) => id !== latest.providerMessageId), latest.providerMessageId];
  const references = chain.length > MAX_REFERENCES ? [chain[0]!, ...chain.slice(-(MAX_REFERENCES - 1))] : chain;
  return { inReplyTo: latest.providerMessageId, references };
}

/**
 * The Message-IDs an inbound message refers to, most telling first: In-Reply-To, then
 * References from the newest back. The first that names a message of the inbox gives the thread.
 */
export function referencedMessageIds(inReplyTo: string | null | undefined, references: string | null | undefined): string[] {
  return [...new Set([...parseMessageIds(inReplyTo), ...parseMessageIds(references).reverse()])];
}

/** Addresses taking part in a message, lower-cased, in header order, without duplicates. */
export function participantsOf(message: { from: string; to: string[]; cc?: string[] }): string[] {
  return [...new Set([message.from, ...message.to, ...(message.cc ?? [])].map((address) => address.toLowerCase()))];
}
