/**
 * Snippets of search results. Postgres' ts_headline gets the text HTML-escaped (its parser would
 * otherwise drop anything that looks like a tag) and without two private-use characters, which it
 * then puts around each match; only those become `<mark>` and `</mark>`. Whatever a message
 * contains, the snippet carries no markup but those two tags. Pure functions.
 */
export const START_MARK = '\uE000';
export const STOP_MARK = '\uE001';
const MARKS = /[\uE000\uE001]/g;

/** The text as ts_headline may see it: without the marks. */
export function unmarked(text: string): string {
  return text.replace(MARKS, '');
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** A marked passage of plain text as the API shows it. */
export function renderSnippet(marked: string): string {
  return marksToTags(escapeHtml(marked));
}

/**
 * A marked passage of text that was escaped before it was marked (ts_headline's): the marks become
 * tags; anything that could still open markup (none should) is escaped, entities left whole.
 */
export function renderEscapedSnippet(marked: string): string {
  return marksToTags(marked.replace(/[<>"']/g, (char) => ENTITIES[char]!).replace(/&(?!(?:amp|lt|gt|quot|#39);)/g, '&amp;'));
}

function marksToTags(text: string): string {
  return text.replaceAll(START_MARK, '<mark>').replaceAll(STOP_MARK, '</mark>');
}

const WINDOW = 80;

const plain = (text: string) => unmarked(text).replace(/\s+/g, ' ').trim();

/**
 * The snippet of a search result: the body's passage ts_headline marked, else the body around the
 * query found as a substring (part of a word, an address), else the subject, ts_headline's marked
 * (a match in the subject only), else the subject around the substring, else the body's start.
 */
export function resultSnippet(
  message: { headline: string; text: string; subjectHeadline: string; subject: string },
  q: string,
): string {
  if (message.headline.includes(START_MARK)) return renderEscapedSnippet(message.headline);
  const inText = markedSubstring(message.text, q);
  if (inText !== undefined) return inText;
  if (message.subjectHeadline.includes(START_MARK)) return renderEscapedSnippet(message.subjectHeadline);
  return markedSubstring(message.subject, q) ?? renderSnippet(plain(message.text).slice(0, 2 * WINDOW));
}

/**
 * The first occurrence of `q` in the text, case-insensitively, marked with some text either side,
 * for what full-text search finds nothing to mark in (a part of a word, an address); undefined
 * when it has none.
 */
function markedSubstring(text: string, q: string): string | undefined {
  const clean = plain(text);
  // Found in the text itself, case-insensitively: positions in a lower-cased copy drift where
  // lower-casing changes a character's length (`İ` becomes two).
  const found = q.length === 0 ? null : new RegExp(q.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'), 'iu').exec(clean);
  if (!found) return undefined;
  const at = found.index;
  const matchEnd = at + found[0].length;
  const start = Math.max(0, at - WINDOW);
  const end = Math.min(clean.length, matchEnd + WINDOW);
  const marked =
    (start > 0 ? '… ' : '') +
    clean.slice(start, at) +
    START_MARK +
    clean.slice(at, matchEnd) +
    STOP_MARK +
    clean.slice(matchEnd, end) +
    (end < clean.length ? ' …' : '');
  return renderSnippet(marked);
}
