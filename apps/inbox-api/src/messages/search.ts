/**
 * Search rules: a message matches when `q` occurs, case-insensitively, in its subject, text
 * body, sender address or an attachment filename. Pure functions.
 */

/** Joins the searchable fields; the line feed keeps a match from spanning two of them. */
export function searchTextOf(message: {
  subject: string;
  fromAddress: string;
  text: string;
  attachmentFilenames: string[];
}): string {
  return [message.subject, message.fromAddress, message.text, ...message.attachmentFilenames].join('\n').toLowerCase();
}

/** A LIKE pattern matching `q` anywhere, with `%`, `_` and `\` in `q` taken literally. */
export function containsPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** `text` with `%`, `_` and `\` escaped, to match literally inside a LIKE pattern (Prisma's `contains` does not escape them). */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
