import { createHash, randomUUID } from 'node:crypto';

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
 * Message-ID; References is its References followed by its Message-ID, or, when it has no
 * References but answers a single message (In-Reply-To), that message's id followed by its own.
 */
export function replyHeaders(latest: { providerMessageId: string; references: string | null; inReplyTo?: string | null }): {
  inReplyTo: string;
  references: string[];
} {
  const parentReferences = parseMessageIds(latest.references);
  const answered = parseMessageIds(latest.inReplyTo);
  const earlier = parentReferences.length > 0 ? parentReferences : answered.length === 1 ? answered : [];
  const chain = [...earlier.filter((id) => id !== latest.providerMessageId), latest.providerMessageId];
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

// Reply and forward prefixes of mail clients in many languages: Re, Fwd, Fw, AW (Antwort), WG
// (Weitergeleitet), SV/VS (Nordic), Antw, Réf, RIF, TR, RV, Odp, Chinese 回复/转发, Japanese 転送,
// Korean 답장/전달… as `re:`, `re :`, `re[2]:`, `re(2):` or with the fullwidth colon of CJK
// clients, matched in lower case. One prefix, where the previous one ended (sticky).
const SUBJECT_PREFIX =
  /(?:re|fwd?|aw|wg|sv|vs|antw|réf|ref|rif|tr|rv|odp|fs|vl|atb|r|enc|i|回复|回覆|答复|转发|轉寄|转寄|転送|답장|전달)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*/uy;
// A mailing-list tag: `[list-name]`.
const LIST_TAG = /\[[^\]]{1,60}\]\s*/uy;
/** Prefixes and tags are removed from this many first characters: mail clients add a few, not thousands. */
const SUBJECT_PREFIX_WINDOW = 1000;

/**
 * The subject as threading compares it: reply and forward prefixes and mailing-list tags removed
 * (in any order and number, within the first SUBJECT_PREFIX_WINDOW characters), whitespace
 * collapsed, case folded. Linear in the subject's length, the prefix work bounded whatever the
 * subject holds. Pure.
 */
export function normalizeSubject(subject: string): string {
  // Runs of whitespace become one space; single spaces, most of any subject, are left as they are.
  const text = subject
    .replace(/[^\S ]\s*|\s{2,}/g, ' ')
    .trim()
    .toLowerCase();
  let start = 0;
  while (start < SUBJECT_PREFIX_WINDOW) {
    const end = matchEnd(SUBJECT_PREFIX, text, start) ?? matchEnd(LIST_TAG, text, start);
    if (end === undefined) break;
    start = end;
  }
  return text.slice(start).trim();
}

/** Where a match of the sticky `pattern` at `index` ends; undefined when there is none (or it is empty). */
function matchEnd(pattern: RegExp, text: string, index: number): number | undefined {
  pattern.lastIndex = index;
  return pattern.exec(text) && pattern.lastIndex > index ? pattern.lastIndex : undefined;
}

/**
 * How much of a received subject is read (cleaned, keyed): far more than is stored (998
 * characters), so that cleaning, which removes and joins, still leaves a whole stored subject; and
 * never the 20 MB a webhook field can hold, whose cleaning and keying held the event loop for seconds.
 */
export const MAX_SUBJECT_SOURCE_LENGTH = 64 * 1024;
/**
 * Characters of the normalised subject that its key covers: less than it is read of, so that a
 * reply (`Re: ` and the subject read 64 KiB deep) keys as its original does.
 */
const KEYED_SUBJECT_LENGTH = 32 * 1024;

/**
 * What a thread is found by when mail names no message of it: the SHA-256 (hex) of the normalised
 * subject, '' when nothing is left of it. A digest, so that the index on it holds subjects of any
 * length (a btree row takes ~2.7 KB at most): 998 emoji of a sent subject are 3 KB.
 */
export function subjectKey(subject: string): string {
  const normalized = normalizeSubject(subject.slice(0, MAX_SUBJECT_SOURCE_LENGTH)).slice(0, KEYED_SUBJECT_LENGTH).toWellFormed();
  return normalized === '' ? '' : createHash('sha256').update(normalized).digest('hex');
}

/** Mail with the same subject and a shared participant joins a thread active this recently. */
export const SUBJECT_THREAD_WINDOW_DAYS = 30;

export interface ThreadCandidate {
  id: string;
  lastMessageAt: Date;
  participants: string[];
}

/**
 * The thread an inbound message joins (RFC 5322 §3.6.4, then what mail clients do):
 * 1. the thread of the first message it names (its own Message-ID, when the inbox sent it; then
 *    In-Reply-To; then References from the newest back) — `referenced` holds those threads in
 *    that order, undefined where the inbox has no such message;
 * 2. failing that, the most recently active thread of the same normalised subject, active within
 *    30 days of the message, that shares a participant with it besides the inbox itself;
 * 3. otherwise none: a new thread. Pure.
 */
export function chooseThread(input: {
  referenced: (string | undefined)[];
  sameSubject: ThreadCandidate[];
  participants: string[];
  inboxAddress: string;
  date: Date;
}): string | undefined {
  const byReference = input.referenced.find((threadId) => threadId !== undefined);
  if (byReference) return byReference;
  const window = SUBJECT_THREAD_WINDOW_DAYS * 24 * 3600 * 1000;
  const others = new Set(input.participants.map((address) => address.toLowerCase()));
  others.delete(input.inboxAddress.toLowerCase());
  return input.sameSubject
    .filter((thread) => Math.abs(input.date.getTime() - thread.lastMessageAt.getTime()) <= window)
    .filter((thread) => thread.participants.some((address) => others.has(address.toLowerCase())))
    .sort((a, b) => b.lastMessageAt.getTime() - a.lastMessageAt.getTime())[0]?.id;
}
