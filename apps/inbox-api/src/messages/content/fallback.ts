import { escapeWrittenLine } from './escape.js';
import type { MessageContent } from './message.js';
import { preview } from './preview.js';

/*
 * `content_clean` for a received mail whose cleaning failed (past the content pool's time limit,
 * or its worker stopped): inbound mail is stored, never refused for its content. The plain text,
 * or the text of the HTML by a linear strip of its tags when there is no plain text, cut at
 * FALLBACK_CONTENT_CHARS. It runs on the event loop, so its work is bounded by the cut whatever
 * the size of the body: only the first HTML_SCAN_CHARS of the HTML are read.
 */

/** The longest fallback `content_clean`, in characters. */
export const FALLBACK_CONTENT_CHARS = 100_000;
const HTML_SCAN_CHARS = 2 * FALLBACK_CONTENT_CHARS;
/** The preview needs the first words only; markdown-it, which makes it, then reads little on the event loop. */
const PREVIEW_SOURCE_CHARS = 2_000;

export interface FallbackContent extends MessageContent {
  /** Which body `content_clean` was made from. */
  source: 'text' | 'html';
  /** Whether it was cut at FALLBACK_CONTENT_CHARS. */
  truncated: boolean;
}

export function fallbackContent(body: { html: string; text: string }): FallbackContent {
  const fromText = /\S/.test(body.text.slice(0, HTML_SCAN_CHARS)) || !body.html;
  const whole = fromText ? body.text : htmlText(body.html.slice(0, HTML_SCAN_CHARS));
  const truncated = whole.length > FALLBACK_CONTENT_CHARS || (!fromText && body.html.length > HTML_SCAN_CHARS);
  // As a plain-text body is cleaned (clean.ts): what could run as HTML or link somewhere unsafe is escaped.
  const contentClean = whole
    .slice(0, FALLBACK_CONTENT_CHARS)
    .toWellFormed()
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map(escapeWrittenLine)
    .join('\n')
    .trim();
  return {
    contentClean,
    preview: preview(contentClean.slice(0, PREVIEW_SOURCE_CHARS)),
    source: fromText ? 'text' : 'html',
    truncated,
  };
}

/** Elements whose content is not text to read. */
const HIDDEN = new Set(['head', 'script', 'style', 'template', 'title']);
/** Elements that start a line of their own. */
const BLOCK = new Set(
  'address article blockquote br dd div dl dt footer h1 h2 h3 h4 h5 h6 header hr li ol p pre section table td th tr ul'.split(
    ' ',
  ),
);
const ENTITY = /&(#\d{1,7}|#x[0-9a-f]{1,6}|amp|lt|gt|quot|apos|nbsp);/gi;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

const isLetter = (code: number) => code >= 0x61 && code <= 0x7a; // of the lower-cased HTML
const isNameChar = (code: number) => isLetter(code) || (code >= 0x30 && code <= 0x39);

/**
 * The text of HTML by one pass over it: tags go (a block element starts a new line), comments and
 * hidden elements go with their content, a `<` that opens no tag stays, the common entities are
 * decoded, blank runs are folded. Each character is looked at a bounded number of times, by
 * indexOf and character codes (a regular expression per tag cost microseconds each).
 */
export function htmlText(html: string): string {
  const lower = html.toLowerCase();
  const parts: string[] = [];
  let text = 0; // where the text not yet taken starts
  let from = 0; // where the next `<` is looked for
  for (;;) {
    const open = html.indexOf('<', from);
    if (open < 0) {
      parts.push(html.slice(text));
      break;
    }
    const next = lower.charCodeAt(open + 1);
    if (!isLetter(next) && next !== 0x2f /* / */ && next !== 0x21 /* ! */ && next !== 0x3f /* ? */) {
      from = open + 1; // opens no tag: text
      continue;
    }
    if (open > text) parts.push(html.slice(text, open));
    let resume: number;
    if (next === 0x21 && lower.startsWith('<!--', open)) {
      const close = lower.indexOf('-->', open + 4);
      resume = close < 0 ? html.length : close + 3;
    } else {
      const close = html.indexOf('>', open + 1);
      if (close < 0) break; // an unclosed tag at the end shows nothing
      const closing = next === 0x2f;
      const nameStart = closing ? open + 2 : open + 1;
      let nameEnd = nameStart;
      while (nameEnd < close && isNameChar(lower.charCodeAt(nameEnd))) nameEnd++;
      const name = lower.slice(nameStart, nameEnd);
      resume = close + 1;
      if (HIDDEN.has(name) && !closing) {
        const hiddenEnd = lower.indexOf(`</${name}`, resume);
        resume = hiddenEnd < 0 ? html.length : hiddenEnd;
      } else if (BLOCK.has(name)) {
        parts.push('\n');
      }
    }
    text = from = resume;
  }
  return parts
    .join('')
    .replace(ENTITY, decodeEntity)
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function decodeEntity(entity: string, name: string): string {
  const lower = name.toLowerCase();
  if (!lower.startsWith('#')) return NAMED[lower] ?? entity;
  const code = lower.startsWith('#x') ? Number.parseInt(lower.slice(2), 16) : Number.parseInt(lower.slice(1), 10);
  return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\uFFFD';
}
