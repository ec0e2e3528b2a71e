import MarkdownIt, { type Token } from 'markdown-it';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { HTMLElement, type Node, parse } from 'node-html-parser';

/*
 * What a message's body becomes: the HTML and plain text of an outgoing Markdown message,
 * `content_clean` (the new content of any message as Markdown, without quoted replies,
 * signatures and invisible parts) and the short preview. Pure functions: no I/O.
 */

// html: false escapes raw HTML written in the Markdown. breaks: true keeps single line breaks,
// as mail writers (and agents) mean them: "Best,\nAda" is two lines, not one.
// markdown-it's validateLink already refuses javascript:, vbscript:, file: and non-image data: links.
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: true });

/** The HTML body and the plain-text alternative of a message written in Markdown. */
export function renderMarkdown(source: string): { html: string; text: string } {
  const tokens = markdown.parse(source, {});
  return {
    html: markdown.renderer.render(tokens, markdown.options, {}),
    text: plainText(tokens, { linkUrls: true, blockMarkers: true }),
  };
}

const PREVIEW_LENGTH = 120;
// The preview needs the start only; this bounds the work for huge bodies.
const PREVIEW_SOURCE_LENGTH = 10_000;

/** The first ~120 characters of `content_clean` as plain words, cut at a word with an ellipsis. */
export function preview(cleanText: string): string {
  const tokens = markdown.parse(cleanText.slice(0, PREVIEW_SOURCE_LENGTH), {});
  const words = plainText(tokens, { linkUrls: false, blockMarkers: false }).replace(/\s+/g, ' ').trim();
  if (words.length <= PREVIEW_LENGTH) return words;
  const lastSpace = words.lastIndexOf(' ', PREVIEW_LENGTH);
  const cut = lastSpace > 0 ? words.slice(0, lastSpace) : words.slice(0, PREVIEW_LENGTH);
  return `${cut.replace(/[\s,;:.\-–—]+$/, '')}…`;
}

/**
 * `content_clean`: the message's own new content as Markdown. HTML (preferred when present) is
 * cleaned on its parsed tree, converted to Markdown, then cleaned by the line rules that also
 * clean plain-text mail. When nothing but quotes and signatures was there (a forward without a
 * comment, say), the content is kept with its quotes rather than answered as empty.
 */
export function cleanContent(body: { html?: string; text?: string }): string {
  const html = body.html?.trim() ? body.html : undefined;
  if (html !== undefined) {
    const clean = tidy(removeQuotedLines(htmlToMarkdown(html, { removeQuotes: true })));
    if (clean !== '') return clean;
  }
  const text = body.text?.replace(/\r\n?/g, '\n') ?? '';
  if (text.trim() !== '') {
    const clean = tidy(removeQuotedLines(text));
    if (clean !== '') return clean;
  }
  // Only quotes: keep them, without the invisible parts.
  return tidy(html !== undefined ? htmlToMarkdown(html, { removeQuotes: false }) : text);
}

/** What every stored copy of a message's body carries besides the body: `content_clean` and the preview. */
export interface MessageContent {
  contentClean: string;
  preview: string;
}

/** `content_clean` and the preview of a body: computed once per message, whatever the number of recipients. */
export function messageContent(body: { html: string; text: string }): MessageContent {
  const contentClean = cleanContent(body);
  return { contentClean, preview: preview(contentClean) };
}

// ---------------------------------------------------------------------------------------------
// HTML: the parsed tree is cleaned, never the markup with regular expressions.

// Elements that are never content.
const NOT_CONTENT = 'head, title, meta, link, style, script, noscript, template, iframe, object, embed, svg';
// A quoted reply or signature: the element goes.
const QUOTE_ELEMENTS = [
  'blockquote[type=cite]', // Apple Mail, Thunderbird
  '.gmail_quote',
  '.gmail_signature',
  '[data-smartmail=gmail_signature]',
  '.yahoo_quoted',
  '.protonmail_quote',
  '.moz-cite-prefix',
  '.moz-signature',
  '#Signature', // Outlook on the web
].join(', ');
// Where Outlook's quoted part begins: this element and everything after it go.
const QUOTE_STARTS = '#appendonsend, #divRplyFwdMsg, #mail-editor-reference-message-container';
const SAFE_LINK = /^(https?:|mailto:|tel:|#|\/)/i;

// Tables used for layout (newsletters, Outlook) rather than for data: their cells hold blocks.
const LAYOUT_CONTENT = 'table, div, p, h1, h2, h3, h4, h5, h6, ul, ol, blockquote, img';
// Elements whose children can be converted apart: plain blocks with no Markdown of their own.
const SPLITTABLE = new Set(['', 'HTML', 'BODY', 'DIV', 'CENTER', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER']);
const BLOCKS = new Set([...SPLITTABLE, 'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'UL', 'OL', 'TABLE', 'BLOCKQUOTE', 'PRE', 'HR']);
// node-html-markdown rescans its whole output after every append, which grows with the square
// of the length: long bodies are converted in pieces of about this size.
const CHUNK_LENGTH = 20_000;

const htmlToMarkdownConverter = new NodeHtmlMarkdown({ maxConsecutiveNewlines: 2 });

function htmlToMarkdown(html: string, options: { removeQuotes: boolean }): string {
  const root = parse(html, { comment: false, blockTextElements: { script: true, style: true, pre: true } });
  for (const element of root.querySelectorAll(NOT_CONTENT)) element.remove();
  for (const element of root.querySelectorAll('*')) {
    if (isInvisible(element)) element.remove();
  }
  for (const image of root.querySelectorAll('img')) {
    if (!isLinkedImage(image)) image.remove();
  }
  for (const link of root.querySelectorAll('a[href]')) {
    if (!SAFE_LINK.test(link.getAttribute('href')?.trim() ?? '')) link.removeAttribute('href');
  }
  if (options.removeQuotes) {
    const start = root.querySelector(QUOTE_STARTS);
    if (start) removeFromHere(start);
    for (const element of root.querySelectorAll(QUOTE_ELEMENTS)) element.remove();
  }
  for (const table of root.querySelectorAll('table')) {
    if (table.getAttribute('role') === 'presentation' || table.querySelector(LAYOUT_CONTENT)) flattenTable(table);
  }
  return htmlChunks(root)
    .map((chunk) => htmlToMarkdownConverter.translate(chunk))
    .join('\n\n');
}

/** A layout table becomes the blocks it lays out, rather than a one-cell Markdown table. */
function flattenTable(table: HTMLElement): void {
  const children = (element: HTMLElement, ...tags: string[]) =>
    element.childNodes.filter((child): child is HTMLElement => child instanceof HTMLElement && tags.includes(child.tagName));
  for (const section of [table, ...children(table, 'THEAD', 'TBODY', 'TFOOT')]) {
    for (const row of children(section, 'TR')) {
      for (const cell of children(row, 'TD', 'TH')) cell.tagName = 'div';
      row.tagName = 'div';
    }
    section.tagName = 'div';
  }
}

/** The element's HTML in pieces of about CHUNK_LENGTH, split only between blocks. */
function htmlChunks(element: HTMLElement): string[] {
  const chunks: string[] = [];
  let chunk = '';
  let afterBlock = true;
  for (const child of element.childNodes) {
    const html = child.toString();
    const block = child instanceof HTMLElement && BLOCKS.has(child.tagName);
    if (block && afterBlock && chunk.length + html.length > CHUNK_LENGTH) {
      chunks.push(chunk);
      chunk = '';
      if (html.length > CHUNK_LENGTH && SPLITTABLE.has(child.tagName)) {
        chunks.push(...htmlChunks(child));
        continue;
      }
    }
    chunk += html;
    afterBlock = block;
  }
  chunks.push(chunk);
  return chunks.filter((piece) => piece.trim() !== '');
}

/** Hidden elements (preheaders, tracking blocks) and tracking pixels: nothing a reader sees. */
function isInvisible(element: HTMLElement): boolean {
  if (element.hasAttribute('hidden')) return true;
  const style = (element.getAttribute('style') ?? '').toLowerCase().replace(/\s+/g, '');
  if (/(^|;)(display:none|visibility:hidden)/.test(style)) return true;
  if (element.tagName !== 'IMG') return false;
  const size = (name: 'width' | 'height') => {
    const value = element.getAttribute(name) ?? new RegExp(`(?:^|;)${name}:([\\d.]+)px`).exec(style)?.[1];
    return value === undefined ? undefined : Number.parseFloat(value);
  };
  const [width, height] = [size('width'), size('height')];
  return (width !== undefined && width <= 1) || (height !== undefined && height <= 1);
}

/**
 * Inline (cid:) and embedded (data:) images are attachments or signature logos, not text, and
 * would fill the Markdown with references nobody can follow: they go, like unsafe sources.
 */
function isLinkedImage(image: HTMLElement): boolean {
  return SAFE_LINK.test(image.getAttribute('src')?.trim() ?? '');
}

/** Removes an element and everything that follows it in document order. */
function removeFromHere(start: HTMLElement): void {
  for (let node: Node | null = start; node && node.parentNode; node = node.parentNode) {
    const siblings = node.parentNode.childNodes;
    for (const sibling of siblings.slice(siblings.indexOf(node) + 1)) sibling.remove();
  }
  start.remove();
}

// ---------------------------------------------------------------------------------------------
// Line rules, for plain text and for the Markdown made from HTML. Lines inside code fences are
// content and never match.

// Emphasis and escapes that HTML conversion leaves around header words, e.g. `**From:**`.
const MARKUP = /[*_\\]/g;
// "On <date>, <someone> wrote:" and its translations; it may wrap over up to three lines.
const ATTRIBUTION = [
  /^On\s.{0,300}\bwrote:$/i,
  /^Am\s.{0,300}\bschrieb\b.{0,200}:$/i,
  /^Le\s.{0,300}\ba écrit\s?:$/i,
  /^El\s.{0,300}\bescribió:$/i,
  /^Op\s.{0,300}\bschreef\b.{0,200}:$/i,
];
const ORIGINAL_MESSAGE = /^-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine)\s*-{2,}$/i;
const HEADER_FROM = /^(From|Von|De):\s/i;
const HEADER_DATE = /^(Sent|Date|Gesendet|Datum|Envoyé):\s/i;
const HEADER_OTHER = /^(To|Subject|An|Betreff|À|Objet):\s/i;
// RFC 3676's "-- ", matched on the trimmed line without markup: also when trailing spaces were
// stripped, and as HTML conversion escapes it (`\--`).
const SIGNATURE = /^--$/;
const QUOTE_LINE = /^ {0,3}>/;
const MOBILE_SIGNATURE = /^(Sent from my .{1,40}|Sent from (Mail|Outlook) for .{1,40}|Get Outlook for .{1,40})$/i;
const SEPARATOR = /^\s*(?:[-_*\\]\s*){3,}$/;
const FENCE = /^ {0,3}(```|~~~)/;

function removeQuotedLines(source: string): string {
  const lines = source.split('\n');
  const inFence = fenceMap(lines);
  const plain = lines.map((line) => line.replace(MARKUP, '').trim());
  const content = (i: number) => !inFence[i];

  const end = plain.findIndex((line, i) => content(i) && startsQuoteOrSignature(plain, i));
  const kept = (end === -1 ? lines : lines.slice(0, end)).filter((line, i) => !(content(i) && QUOTE_LINE.test(line)));

  // What is left at the end of a reply once its quote is gone: blank lines, "Sent from my
  // iPhone", the rule Outlook draws above its header block.
  while (kept.length > 0) {
    const last = kept.at(-1)!.replace(MARKUP, '').trim();
    if (last !== '' && !MOBILE_SIGNATURE.test(last) && !SEPARATOR.test(kept.at(-1)!)) break;
    kept.pop();
  }
  return kept.join('\n');
}

function startsQuoteOrSignature(plain: string[], i: number): boolean {
  const line = plain[i]!;
  if (SIGNATURE.test(line) || ORIGINAL_MESSAGE.test(line)) return true;
  if (HEADER_FROM.test(line)) {
    const next = plain.slice(i + 1, i + 6);
    return next.some((l) => HEADER_DATE.test(l)) && next.some((l) => HEADER_OTHER.test(l));
  }
  if (!/^(On|Am|Le|El|Op)\s/i.test(line)) return false;
  let joined = line;
  for (let j = i; j < i + 3 && j < plain.length; j++) {
    if (j > i) {
      if (plain[j] === '') break;
      joined += ` ${plain[j]}`;
    }
    if (ATTRIBUTION.some((pattern) => pattern.test(joined))) return true;
  }
  return false;
}

/** For each line, whether it lies inside a fenced code block (fence lines included). */
function fenceMap(lines: string[]): boolean[] {
  let open: string | undefined;
  return lines.map((line) => {
    const fence = FENCE.exec(line)?.[1];
    if (open === undefined) {
      if (fence) open = fence;
      return fence !== undefined;
    }
    if (fence === open) open = undefined;
    return true;
  });
}

/** Blank lines made empty, at most one in a row, none at either end. */
function tidy(text: string): string {
  return text
    .replace(/^[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// ---------------------------------------------------------------------------------------------
// Plain text from Markdown tokens.

interface PlainTextOptions {
  /** "label (url)" rather than just "label". */
  linkUrls: boolean;
  /** List bullets and numbers, "> " before quoted lines, blank lines between blocks. */
  blockMarkers: boolean;
}

function plainText(tokens: Token[], options: PlainTextOptions): string {
  const blocks: string[] = [];
  const prefixes: string[] = []; // per nesting level: "> " for quotes, indentation for list items
  const lists: { ordered: boolean; next: number }[] = [];
  let marker: string | undefined; // the bullet or number of the list item's first line
  let tight = false; // a tight list's paragraphs are not separated by blank lines
  let startsList = false; // but a list is separated from what comes before it
  let row: string[] | undefined;

  const emit = (text: string) => {
    if (!options.blockMarkers) return blocks.push(text);
    const lines = text.split('\n').map((line, i) => {
      let prefix = prefixes.join('');
      if (i === 0 && marker !== undefined) {
        prefix = prefix.slice(0, prefix.length - marker.length) + marker;
        marker = undefined;
      }
      return (prefix + line).trimEnd();
    });
    blocks.push((blocks.length > 0 && (startsList || !tight) ? '\n' : '') + lines.join('\n'));
    startsList = false;
  };

  for (const token of tokens) {
    switch (token.type) {
      case 'paragraph_open':
        tight = token.hidden;
        break;
      case 'heading_open':
      case 'code_block':
      case 'fence':
      case 'hr':
      case 'table_open':
        tight = false;
        break;
    }
    switch (token.type) {
      case 'inline':
        if (row) row.push(inlineText(token.children ?? [], options));
        else emit(inlineText(token.children ?? [], options));
        break;
      case 'code_block':
      case 'fence':
        emit(token.content.replace(/\n$/, ''));
        break;
      case 'hr':
        emit('---');
        break;
      case 'blockquote_open':
        prefixes.push('> ');
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        if (lists.length === 0) startsList = true;
        lists.push({ ordered: token.type === 'ordered_list_open', next: Number(token.attrGet('start') ?? 1) });
        break;
      case 'list_item_open': {
        const list = lists.at(-1)!;
        marker = list.ordered ? `${list.next++}. ` : '- ';
        prefixes.push(' '.repeat(marker.length));
        break;
      }
      case 'blockquote_close':
      case 'list_item_close':
        prefixes.pop();
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'tr_open':
        row = [];
        break;
      case 'tr_close':
        emit(row!.join(' | '));
        tight = true;
        row = undefined;
        break;
    }
  }
  return blocks.join('\n');
}

function inlineText(children: Token[], options: PlainTextOptions): string {
  let text = '';
  const links: { href: string; start: number }[] = [];
  for (const token of children) {
    switch (token.type) {
      case 'text':
      case 'code_inline':
        text += token.content;
        break;
      case 'softbreak':
      case 'hardbreak':
        text += '\n';
        break;
      case 'image':
        text += token.content; // the alt text
        break;
      case 'link_open':
        links.push({ href: String(token.attrGet('href') ?? ''), start: text.length });
        break;
      case 'link_close': {
        const link = links.pop()!;
        const label = text.slice(link.start);
        if (options.linkUrls && !sameAsLabel(link.href, label)) text += ` (${link.href})`;
        break;
      }
    }
  }
  return text;
}

/** Linkified addresses and URLs already show their target. */
function sameAsLabel(href: string, label: string): boolean {
  return [label, `http://${label}`, `https://${label}`, `mailto:${label}`].includes(href);
}
