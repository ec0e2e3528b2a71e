import { z } from 'zod';

/**
 * Labels: lower-case slugs of at most 64 characters (letters, digits, `-`, `_`, `.`, `/`, `:`),
 * on every message. The system sets `received` and `unread` on inbound mail and `sent` on what is
 * sent; agents mark a message read by removing `unread`. Reading never changes labels. Pure.
 */
export const MAX_LABEL_LENGTH = 64;
export const MAX_LABELS = 50;
const SLUG = /^[a-z0-9](?:[a-z0-9._/:-]*[a-z0-9])?$/;

/** Labels every inbound message arrives with. */
export const INBOUND_LABELS = ['received', 'unread'] as const;
/** Labels every outbound message is recorded with. */
export const OUTBOUND_LABELS = ['sent'] as const;
/** Set by the system from what the message is: a client neither adds nor removes them. */
export const FIXED_LABELS: readonly string[] = ['received', 'sent'];

export const label = z
  .string()
  .max(MAX_LABEL_LENGTH, { abort: true })
  .regex(/^[^\p{Cc}]*$/u, { error: 'Must not contain control characters', abort: true })
  .transform((value) => value.trim().toLowerCase())
  .pipe(
    z.string().regex(SLUG, {
      error: `Must be a lower-case slug of 1 to ${MAX_LABEL_LENGTH} letters, digits, '-', '_', '.', '/' or ':'`,
    }),
  )
  .meta({ example: 'needs-review' });

export const labelList = z.array(label).max(MAX_LABELS);

/** The labels of a new message: the system's for its direction, then the client's, once each, in order. */
export function initialLabels(direction: 'inbound' | 'outbound', extra: readonly string[] = []): string[] {
  return unique([...(direction === 'inbound' ? INBOUND_LABELS : OUTBOUND_LABELS), ...extra]);
}

/** `labels` with `add` appended (those not present) and `remove` taken away; `remove` wins over `add`. */
export function changeLabels(
  labels: readonly string[],
  change: { add?: readonly string[]; remove?: readonly string[] },
): string[] {
  const removed = new Set(change.remove ?? []);
  return unique([...labels, ...(change.add ?? [])]).filter((value) => !removed.has(value));
}

/** The fixed labels a change would add or remove: a client may not. */
export function fixedLabelsTouched(change: { add?: readonly string[]; remove?: readonly string[] }): string[] {
  return unique([...(change.add ?? []), ...(change.remove ?? [])].filter((value) => FIXED_LABELS.includes(value)));
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
