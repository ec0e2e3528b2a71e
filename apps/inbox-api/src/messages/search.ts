/**
 * Search rules: a message matches when `q` occurs, case-insensitively, in its subject, text
 * body, sender address or an attachment filename. Pure functions.
 */

/**
 * Characters of a message that search reads: its subject first, then the sender, the attachments'
 * names and the text body (last: past this length, only the body's end is left out). Postgres's full-text vector of a text holds at most 1 MB, and a text of
 * distinct short words makes a vector over twice its size: a 1.5 MB body of base64 lines could
 * not be stored. This much of the text keeps its vector well under the limit.
 */
export const MAX_SEARCH_TEXT_LENGTH = 200_000;

/** Joins the searchable fields (at most MAX_SEARCH_TEXT_LENGTH characters); the line feed keeps a match from spanning two of them. */
export function searchTextOf(message: {
  subject: string;
  fromAddress: string;
  text: string;
  attachmentFilenames: string[];
}): string {
  // The text is cut before it is joined: a 20 MB body is not copied whole to keep its first 200,000 characters.
  const text = message.text.slice(0, MAX_SEARCH_TEXT_LENGTH);
  const joined = [message.subject, message.fromAddress, ...message.attachmentFilenames, text].join('\n');
  return joined.slice(0, MAX_SEARCH_TEXT_LENGTH).toWellFormed().toLowerCase();
}

/** A LIKE pattern matching `q` anywhere, with `%`, `_` and `\` in `q` taken literally. */
export function containsPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** `text` with `%`, `_` and `\` escaped, to match literally inside a LIKE pattern (Prisma's `contains` does not escape them). */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
