import { parseMailboxes } from '../adapters/mail/mime.js';
import { prefixOf } from '../shared/text.js';
import { isSendableAddress, MAX_SUBJECT_LENGTH } from './schemas.js';

/**
 * Rules of replies and forwards: their subject, recipients and forwarded body, derived from the
 * message they answer. Pure functions.
 */

// A reply prefix as mail clients write it, in any case: Re, Aw (Antwort), Sv/Vs (Nordic), Antw,
// Odp, Ynt, 回复/答复 — with an optional counter (`Re[2]:`, `Re(2):`) and the fullwidth colon.
const REPLY_PREFIX = /^\s*(?:re|aw|sv|vs|antw|odp|ynt|回复|回覆|答复|답장)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]/iu;
// A forward prefix: Fwd, Fw, Wg (Weitergeleitet), Tr (transféré), Rv (reenviado), Vs, Enc, 转发, 転送.
const FORWARD_PREFIX = /^\s*(?:fwd?|wg|tr|rv|enc|i|转发|轉寄|転送|전달)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]/iu;

/**
 * `Re: <subject>`, unless the subject already starts with a reply prefix in any language or case
 * (`Re:`, `RE:`, `Aw:`, `SV:`, `Re[2]:`), which is kept as it is, so that prefixes never pile up.
 * Capped at the longest subject sent.
 */
export function replySubject(subject: string): string {
  const trimmed = subject.trim();
  return capSubject(REPLY_PREFIX.test(trimmed) ? trimmed : `Re: ${trimmed}`);
}

/** `Fwd: <subject>`, unless it already starts with a forward prefix (`Fwd:`, `FW:`, `WG:`). */
export function forwardSubject(subject: string): string {
  const trimmed = subject.trim();
  return capSubject(FORWARD_PREFIX.test(trimmed) ? trimmed : `Fwd: ${trimmed}`);
}

function capSubject(subject: string): string {
  return prefixOf(subject, MAX_SUBJECT_LENGTH);
}

/**
 * Bare addresses of header values (`"Name" <a@b>` or `a@b`), as the transport will read them, and
 * only those a send could name. A sender's `<ceo"@rival.test,>` parses once into `ceo"@rival.test,`,
 * which no block list matches, and the transport parses that again into `ceo@rival.test`: so the
 * values are parsed until they stay the same, and what is still not plain name@domain is left out.
 */
export function bareAddresses(values: readonly string[]): string[] {
  const parse = (texts: readonly string[]) => parseMailboxes([...texts]).map((mailbox) => mailbox.address.trim());
  let addresses = parse(values);
  for (let pass = 0; pass < 3; pass += 1) {
    const again = parse(addresses);
    if (again.length === addresses.length && again.every((address, i) => address === addresses[i])) break;
    addresses = again;
  }
  // A domain's trailing dot is the same domain, fully qualified: the lists match it as such.
  return addresses.filter((address) => isSendableAddress(address.endsWith('.') ? address.slice(0, -1) : address));
}

/** `values` without those in `exclude` and without repeats, compared case-insensitively; the first spelling stays. */
export function distinctAddresses(values: readonly string[], exclude: readonly string[] = []): string[] {
  const seen = new Set(exclude.map((address) => address.toLowerCase()));
  const result: string[] = [];
  for (const address of values) {
    const key = address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(address);
  }
  return result;
}

export interface AnsweredMessage {
  direction: 'inbound' | 'outbound';
  fromAddress: string;
  toAddresses: string[];
  ccAddresses: string[];
  replyToAddresses: string[];
}

/**
 * Who a reply goes to. To an inbound message: its Reply-To, else its sender; to one the inbox
 * sent: its recipients again. Reply-all, as mail clients do it, adds the other To recipients to To
 * and the Cc recipients to Cc. The inbox's own address is never a recipient, nobody appears twice
 * (case-insensitively), and addresses the client names in `cc`/`bcc` join (Bcc only on the envelope).
 */
export function replyRecipients(
  message: AnsweredMessage,
  options: { inboxAddress: string; replyAll: boolean; cc?: readonly string[]; bcc?: readonly string[] },
): { to: string[]; cc: string[]; bcc: string[] } {
  const own = [options.inboxAddress];
  const primary =
    message.direction === 'inbound'
      ? bareAddresses(message.replyToAddresses.length > 0 ? message.replyToAddresses : [message.fromAddress])
      : bareAddresses(message.toAddresses);
  const otherTo = options.replyAll && message.direction === 'inbound' ? bareAddresses(message.toAddresses) : [];
  const to = distinctAddresses([...primary, ...otherTo], own);
  const others = options.replyAll ? bareAddresses(message.ccAddresses) : [];
  const cc = distinctAddresses([...others, ...(options.cc ?? [])], [...own, ...to]);
  const bcc = distinctAddresses(options.bcc ?? [], [...own, ...to, ...cc]);
  return { to, cc, bcc };
}

/**
 * The body of a forward: the client's note, then the forwarded message's header block and text,
 * as mail clients write it.
 */
export function forwardBody(
  note: string | undefined,
  message: { fromAddress: string; toAddresses: string[]; ccAddresses: string[]; subject: string; timestamp: Date; text: string },
): string {
  const header = [
    '---------- Forwarded message ---------',
    `From: ${message.fromAddress}`,
    `Date: ${message.timestamp.toUTCString()}`,
    `Subject: ${message.subject}`,
    `To: ${message.toAddresses.join(', ')}`,
    ...(message.ccAddresses.length > 0 ? [`Cc: ${message.ccAddresses.join(', ')}`] : []),
  ];
  // Markdown: the header lines end with two spaces so that each stays on its own line.
  const block = `${header.join('  \n')}\n\n${message.text}`;
  return note !== undefined && note.trim() !== '' ? `${note}\n\n${block}` : block;
}
