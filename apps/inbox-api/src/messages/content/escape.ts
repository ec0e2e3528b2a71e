/*
 * Escaping for Markdown, so that text means what it meant: what an HTML body showed as text stays
 * text (no tag, entity, link, image, emphasis or block marker it did not show), and a person's
 * plain-text body cannot carry live HTML or a link to an unsafe place. Only what CommonMark (with
 * GFM tables and strikethrough) would read as markup is escaped: `a < b`, `snake_case`, `2 * 3`
 * and `AT&T` stay as they are.
 */

/** Links and images that may be kept: the web, mail, phone, anchors and paths on the same site. */
export const SAFE_URL = /^(https?:|mailto:|tel:|#|\/)/i;

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const WHITESPACE = /\s/;
// After `<`: a tag, a closing tag, a comment or declaration, a processing instruction, an autolink.
const TAG_START = /[A-Za-z/!?]/;
const ENTITY = /&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/y;
const INLINE_SPECIAL = /[\\`*_~[\]!<&]/g;
const CELL_SPECIAL = /[\\`*_~[\]!<&|]/g;

/** Whitespace as CommonMark's emphasis rules see it: '' (a line's start or end) counts as such. */
export const isSpace = (char: string): boolean => char === '' || WHITESPACE.test(char);
/** Neither whitespace nor punctuation: a character inside a word. */
export const isWordChar = (char: string): boolean => !isSpace(char) && !PUNCTUATION.test(char);

/**
 * Text as Markdown inline content. `before` and `after` are the characters that may stand around
 * it in the line ('' at its start or end; several when what stands there is not settled yet, and
 * then what any of them would make markup is escaped): whether `*`, `_`, `~`, `!`, `<`, `&` or `\`
 * would be read as markup depends on them. In a table cell, `|` is escaped too.
 */
export function escapeInline(
  text: string,
  before: string | readonly string[],
  after: string | readonly string[],
  options: { cell: boolean },
): string {
  const befores = typeof before === 'string' ? [before] : before;
  const afters = typeof after === 'string' ? [after] : after;
  const followed = afters.some((char) => char !== '');
  return text.replace(options.cell ? CELL_SPECIAL : INLINE_SPECIAL, (char: string, i: number) => {
    const previous = i > 0 ? [text[i - 1]!] : befores;
    const next = i + 1 < text.length ? [text[i + 1]!] : afters;
    for (const p of previous) {
      for (const n of next) {
        if (isMarkup(char, p, n, { text, i, followed })) return `\\${char}`;
      }
    }
    return char;
  });
}

// `&` and what follows it to the end of the text: an entity, were the text to go on.
const ENTITY_PREFIX = /&(?:#[xX]?[0-9a-fA-F]{0,6}|[A-Za-z][A-Za-z0-9]{0,31})$/y;

/**
 * Whether `char`, between `previous` and `next`, is read as markup rather than text (`&` also
 * when it starts an entity that what `followed` the text could complete).
 */
function isMarkup(char: string, previous: string, next: string, at: { text: string; i: number; followed: boolean }): boolean {
  switch (char) {
    case '\\':
      return next === '' || ASCII_PUNCTUATION.test(next);
    case '*':
      return !(isSpace(previous) && isSpace(next));
    case '_':
      return !((isSpace(previous) && isSpace(next)) || (isWordChar(previous) && isWordChar(next)));
    case '~':
      return previous === '~' || next === '~';
    case '!':
      return next === '[';
    case '<':
      return TAG_START.test(next);
    case '&':
      ENTITY.lastIndex = at.i;
      if (ENTITY.test(at.text)) return true;
      ENTITY_PREFIX.lastIndex = at.i;
      return at.followed && ENTITY_PREFIX.test(at.text);
    default: // ` [ ] |
      return true;
  }
}

// A line start that opens a block: ATX heading, quote, bullet, setext underline, thematic break.
const BLOCK_START =
  /^(?:#{1,6}(?=[ \t]|$)|>|[-+*](?=[ \t]|$)|=+[ \t]*$|-+[ \t]*$|(?:-[ \t]*){3,}$|(?:\*[ \t]*){3,}$|(?:_[ \t]*){3,}$)/;
// An ordered list item: the escape goes before its `.` or `)`.
const ORDERED_START = /^\d{1,9}(?=[.)](?:[ \t]|$))/;
// A GFM table's delimiter row, as `|---|:--:|` or `--- | ---`.
const DELIMITER_ROW = /^[|:\- \t]*$/;

/** A line of inline Markdown, made to start a paragraph line rather than a block. */
export function escapeLineStart(line: string): string {
  if (BLOCK_START.test(line)) return `\\${line}`;
  const ordered = ORDERED_START.exec(line);
  if (ordered) return `${ordered[0]}\\${line.slice(ordered[0].length)}`;
  if (DELIMITER_ROW.test(line) && line.includes('|') && line.includes('-')) return line.replaceAll('|', '\\|');
  return line;
}

/** Heading text whose trailing `#`s would be read as the heading's closing sequence. */
export function escapeHeadingEnd(text: string): string {
  let start = text.length;
  while (start > 0 && text[start - 1] === '#') start--;
  if (start === text.length || (start > 0 && text[start - 1] !== ' ' && text[start - 1] !== '\t')) return text;
  return `${text.slice(0, start)}\\${text.slice(start)}`;
}

/** A URL as a link destination: no space, angle bracket, backslash or pipe in it, its parentheses escaped. */
export function linkDestination(url: string): string {
  return url.replace(/[\p{Cc}\s<>\\|]/gu, (char) => encodeURIComponent(char)).replace(/[()]/g, '\\$&');
}

/** Backticks enough to open and close code holding `code`: one more than its longest run. */
export function backticks(code: string, minimum: number): string {
  let longest = 0;
  for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  return '`'.repeat(Math.max(minimum, longest + 1));
}

/** Inline code, padded where CommonMark would otherwise take a space or backtick at its ends as delimiter. */
export function codeSpan(code: string): string {
  const fence = backticks(code, 1);
  const pad = code.startsWith('`') || code.endsWith('`') || (code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '');
  return pad ? `${fence} ${code} ${fence}` : `${fence}${code}${fence}`;
}

// What escapeWrittenLine looks at: a backslash (it skips what follows), `<`, `&`, `]`.
const ESCAPED_CHARS = /[\\<&\]]/;
// Spaces and an opening angle bracket after `](` or `]:`, matched where they stand (not on a copy of the rest of the line).
const DESTINATION_START = /([ \t]*)(<?)/y;

/**
 * A line of Markdown written by a person (a plain-text body), with what could run as HTML or link
 * somewhere unsafe escaped: a `<` that would open a tag, comment or autolink, an `&` that would
 * make an entity, and the `]` of a link, image or link definition whose destination is not a web,
 * mail, phone or same-site address. The rest of its Markdown is left alone, also in inline code,
 * where such an escape shows: which backticks pair up depends on lines around, and a wrong guess
 * would leave HTML live. Escaped characters are skipped, so that escaping again changes nothing.
 */
export function escapeWrittenLine(line: string): string {
  // Most lines have none of the characters looked at below: they are kept without copying.
  if (!ESCAPED_CHARS.test(line)) return line;
  const parts: string[] = [];
  let copied = 0;
  // The `<` that opens a safe link's destination (`](<https://…>)`) is the link's, not a tag's.
  let destinationBracket = -1;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    let escape = false;
    if (char === '\\') i++;
    else if (char === '<') escape = i !== destinationBracket && TAG_START.test(line[i + 1] ?? '');
    else if (char === '&') {
      ENTITY.lastIndex = i;
      escape = ENTITY.test(line);
    } else if (char === ']' && (line[i + 1] === '(' || line[i + 1] === ':')) {
      DESTINATION_START.lastIndex = i + 2;
      const [, spaces, bracket] = DESTINATION_START.exec(line)!;
      const destination = i + 2 + spaces!.length + bracket!.length;
      escape = !SAFE_URL.test(line.slice(destination, destination + 10));
      if (!escape && bracket) destinationBracket = i + 2 + spaces!.length;
    }
    if (escape) {
      parts.push(line.slice(copied, i), '\\');
      copied = i;
    }
  }
  parts.push(line.slice(copied));
  return parts.join('');
}
