import { SAFE_URL } from './escape.js';
import type { HtmlElement, HtmlNode } from './html-tree.js';
import { MarkdownWriter, type SpanKind } from './markdown-writer.js';

/*
 * HTML (as parsed by html-tree.ts) to Markdown, in one walk over the tree in document order with
 * a stack of its own: any depth of nesting, no recursion. Layout tables (newsletters, Outlook)
 * become the blocks they lay out, data tables Markdown tables. Lines come out as the mail showed
 * them: mail programs write a line as a <div> (or as Outlook's margin-less <p>) and a blank line
 * as an empty one, so those end a line, where a <p> ends a paragraph. Quotes are written as
 * Markdown quotes; where a quote that marks none of its lines begins is told to the caller.
 */

const BLOCKS = new Set([
  'html',
  'body',
  'p',
  'blockquote', // an indent, not a quote
  'section',
  'article',
  'main',
  'header',
  'footer',
  'nav',
  'aside',
  'center',
  'address',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'legend',
  'details',
  'summary',
  'dl',
  'dt',
  'dd',
  'li', // outside a list
]);
const SPANS: Readonly<Record<string, SpanKind>> = {
  b: 'strong',
  strong: 'strong',
  i: 'em',
  em: 'em',
  cite: 'em',
  dfn: 'em',
  var: 'em',
  s: 'del',
  strike: 'del',
  del: 'del',
};
const CODE = new Set(['code', 'kbd', 'samp', 'tt']);
const HEADINGS: Readonly<Record<string, number>> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
const TABLE_PARTS = new Set(['caption', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th']);
const TABLE_SECTIONS = new Set(['thead', 'tbody', 'tfoot']);

/** Laid out (its cells hold blocks), data (rows of cells), or bare (no rows: its content flows on). */
type TableKind = 'layout' | 'data' | 'bare';

/** Entering an element tells what leaving it ends (nothing for inline ones), or SKIP when it was written whole. */
type Leave = 'block' | 'line' | 'quote' | 'list' | 'item' | 'span' | 'heading' | 'table' | 'cell' | undefined;
const SKIP = 'skip';

/** The Markdown, and the line where a quote that marks none of its lines (Outlook's) begins, if any. */
export function htmlToMarkdown(root: HtmlElement): { markdown: string; quoteStartLine: number | undefined } {
  const writer = new MarkdownWriter();
  const tables = new Map<HtmlElement, TableKind>();
  const frames: { element: HtmlElement; next: number; leave: Leave }[] = [{ element: root, next: 0, leave: undefined }];
  let quoteStartLine: number | undefined;
  while (frames.length > 0) {
    const frame = frames.at(-1)!;
    const child = frame.element.children[frame.next++];
    if (child === undefined) {
      frames.pop();
      leave(frame.leave, frame.element, writer);
    } else if (typeof child === 'string') {
      writer.text(child);
    } else {
      if (child.quoteStart && quoteStartLine === undefined) quoteStartLine = writer.nextLine();
      const leave = enter(child, writer, tables);
      if (leave !== SKIP) frames.push({ element: child, next: 0, leave });
    }
  }
  return { markdown: writer.toString(), quoteStartLine };
}

function enter(element: HtmlElement, writer: MarkdownWriter, tables: Map<HtmlElement, TableKind>): Leave | typeof SKIP {
  const { name, attributes } = element;
  switch (name) {
    case 'br':
      writer.lineBreak();
      return SKIP;
    case 'hr':
      writer.rule();
      return SKIP;
    case 'img': // only images on the web are in the tree
      writer.image(attributes.alt ?? '', attributes.src!.trim());
      return SKIP;
    case 'pre':
      writer.codeBlock(textContent(element).replace(/^\n/, '')); // the newline after <pre> is not shown
      return SKIP;
    case 'blockquote':
      // Gmail indents text as a borderless blockquote: that is the writer's text, not a quote.
      if (/border\s*:\s*none/i.test(attributes.style ?? '')) break;
      writer.startQuote();
      return 'quote';
    case 'ul':
    case 'ol': {
      const start = Number.parseInt(attributes.start ?? '1', 10);
      writer.startList(name === 'ol', Number.isSafeInteger(start) && start >= 0 ? start : 1);
      return 'list';
    }
    case 'li':
      if (element.parent?.name !== 'ul' && element.parent?.name !== 'ol') break;
      writer.startItem();
      return 'item';
    case 'a': {
      const href = attributes.href?.trim() ?? '';
      if (!SAFE_URL.test(href)) return undefined; // the text stays, the unsafe target goes
      writer.openSpan('link', href);
      return 'span';
    }
    case 'table': {
      const kind = tableKind(element);
      tables.set(element, kind);
      if (kind === 'bare') return undefined;
      if (kind === 'layout') {
        writer.block();
        return 'block';
      }
      writer.startTable();
      return 'table';
    }
  }
  if (CODE.has(name)) {
    writer.code(textContent(element));
    return SKIP;
  }
  if (SPANS[name]) {
    writer.openSpan(SPANS[name]);
    return 'span';
  }
  if (HEADINGS[name]) {
    writer.startHeading(HEADINGS[name]);
    return 'heading';
  }
  if (TABLE_PARTS.has(name)) return enterTablePart(element, writer, tables);
  if (isLine(element)) {
    writer.startLine();
    return 'line';
  }
  if (BLOCKS.has(name)) {
    writer.block();
    return 'block';
  }
  return undefined; // inline, or unknown: its content flows on
}

function leave(what: Leave, element: HtmlElement, writer: MarkdownWriter): void {
  switch (what) {
    case 'block':
      return writer.block();
    case 'line':
      // Outlook writes a blank line as an empty paragraph (`<o:p>&nbsp;</o:p>`, sometimes a space).
      return writer.endLine(element.name === 'p');
    case 'quote':
      return writer.endQuote();
    case 'list':
      return writer.endList();
    case 'item':
      return writer.endItem();
    case 'span':
      return writer.closeSpan();
    case 'heading':
      return writer.endHeading();
    case 'table':
      return writer.endTable();
    case 'cell':
      return writer.endCell();
  }
}

// Outlook's (and Word's) paragraphs, and paragraphs styled without a margin, are lines.
const OUTLOOK_PARAGRAPH = /(?:^|\s)MsoNormal(?:\s|$)/;
const ZERO_MARGIN = /(?:^|;)\s*margin(-top|-bottom)?\s*:\s*0(?:px|pt|cm|in|em)?\s*(?=;|$)/gi;

/** An element that is a line of its own: a <div>, or a <p> shown without a margin. */
function isLine({ name, attributes }: HtmlElement): boolean {
  if (name === 'div') return true;
  if (name !== 'p') return false;
  if (attributes.class !== undefined && OUTLOOK_PARAGRAPH.test(attributes.class)) return true;
  // Most paragraphs have no style: matchAll copies its regex, at a cost per <p> (bench:ingest's blank paragraphs).
  if (attributes.style === undefined) return false;
  const zero = new Set(Array.from(attributes.style.matchAll(ZERO_MARGIN), (match) => match[1]?.toLowerCase()));
  return zero.has(undefined) || (zero.has('-top') && zero.has('-bottom'));
}

/** Rows and cells of a data table; blocks in a layout table (or outside any); nothing in a bare one. */
function enterTablePart(element: HtmlElement, writer: MarkdownWriter, tables: Map<HtmlElement, TableKind>): Leave {
  const table = owningTable(element);
  const kind = table && tables.get(table);
  if (kind === 'bare') return undefined;
  if (kind === 'data') {
    if (element.name === 'tr') writer.startRow();
    if ((element.name === 'td' || element.name === 'th') && element.parent?.name === 'tr') {
      writer.startCell();
      return 'cell';
    }
    return undefined; // a section, caption, or stray cell: its content is written before the table
  }
  writer.block();
  return 'block';
}

function tableKind(table: HtmlElement): TableKind {
  if (table.attributes.role === 'presentation' || table.holdsLayout) return 'layout';
  const isRow = (node: HtmlNode) => typeof node !== 'string' && node.name === 'tr';
  const hasRow = table.children.some(
    (child) => isRow(child) || (typeof child !== 'string' && TABLE_SECTIONS.has(child.name) && child.children.some(isRow)),
  );
  return hasRow ? 'data' : 'bare';
}

/** The table a row, cell or section belongs to: td → tr → tbody → table at most. */
function owningTable(element: HtmlElement): HtmlElement | undefined {
  let node = element.parent;
  for (let steps = 0; node && steps < 3; steps++, node = node.parent) {
    if (node.name === 'table') return node;
    if (!TABLE_PARTS.has(node.name)) return undefined;
  }
  return undefined;
}

/** The text inside an element, <br> as a line break. */
function textContent(element: HtmlElement): string {
  const parts: string[] = [];
  const stack: HtmlNode[] = [element];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node === 'string') parts.push(node);
    else if (node.name === 'br') parts.push('\n');
    else for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return parts.join('');
}
