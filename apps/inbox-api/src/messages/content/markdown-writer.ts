import {
  codeSpan,
  escapeHeadingEnd,
  escapeInline,
  escapeLineStart,
  isSpace,
  isWordChar,
  linkDestination,
  backticks,
} from './escape.js';

/*
 * Markdown written block by block and piece by piece, in time linear in what is written: lines
 * are collected in arrays and joined once, and nothing written is searched again. A line break
 * inside a paragraph is a plain newline: the service reads Markdown with single line breaks kept
 * (see render.ts), as plain-text mail writes them, and trailing spaces would be invisible markup.
 */

export type SpanKind = 'strong' | 'em' | 'del' | 'link';

/** Deeper quotes and list items are written at this depth: their prefixes would outgrow the text. */
const MAX_CONTAINER_DEPTH = 16;
/** Table columns are padded to line up, up to this width. */
const MAX_PADDED_WIDTH = 40;

const BREAK = Symbol('hard line break');

interface Markup {
  markdown: string;
  kind?: SpanKind;
  /** An emphasis, strong or strikethrough delimiter (links are not: brackets need no flanking). */
  delimiter?: 'open' | 'close';
  /** For a closing delimiter, its opening one; for an opening one, its closing one. */
  opener?: Markup;
  closer?: Markup;
  /** Set while a paragraph is written out: the piece's place among its pieces, and, for an opening delimiter, in the output. */
  index?: number;
  slot?: number;
  /** For an opening delimiter that cannot stand where it is: it and its closer write nothing. */
  dropped?: boolean;
}

/** Text still to be escaped (it needs its neighbours for that), markup as is, or a hard line break. */
type Piece = string | Markup | typeof BREAK;

interface Span {
  kind: SpanKind;
  href: string;
  /** Its opening markup, once content came: empty spans write nothing. */
  opened: Markup | undefined;
}

const DELIMITERS: Record<Exclude<SpanKind, 'link'>, string> = { strong: '**', em: '_', del: '~~' };

/**
 * The inline content of one paragraph (or table cell) at a time. HTML collapses whitespace and
 * Markdown delimiters must touch their text, so spaces are held back until the next word, and
 * a span's opening delimiter until its first content; a span of the same kind inside another
 * adds nothing. Spans still open at a hard break or the paragraph's end are closed there and
 * opened again before the next content.
 */
class Paragraph {
  private pieces: Piece[] = [];
  /** Every span entered and not yet left; `null` for one inside another of its kind. */
  private readonly spans: (Span | null)[] = [];
  /** The spans that write markup, outermost first: at most one of each kind. */
  private readonly active: Span[] = [];
  private pendingSpace = false;
  private lineHasContent = false;

  constructor(readonly cell: boolean) {}

  get hasLineContent(): boolean {
    return this.lineHasContent;
  }

  text(raw: string): void {
    const collapsed = raw.replace(/\s+/g, ' ');
    const words = collapsed.trim();
    if (words === '') {
      if (collapsed !== '') this.space();
      return;
    }
    this.beginContent(collapsed.startsWith(' '));
    this.push(words);
    this.pendingSpace = collapsed.endsWith(' ');
  }

  space(): void {
    if (this.lineHasContent) this.pendingSpace = true;
  }

  markup(markdown: string): void {
    this.beginContent(false);
    this.pieces.push({ markdown });
  }

  code(raw: string): void {
    const collapsed = raw.replace(/\s+/g, ' ');
    const code = collapsed.trim();
    if (code === '') return this.text(collapsed);
    this.beginContent(collapsed.startsWith(' '));
    // A cell's pipes end it, also inside code.
    this.pieces.push({ markdown: codeSpan(this.cell ? code.replaceAll('|', '\\|') : code) });
    this.pendingSpace = collapsed.endsWith(' ');
  }

  hardBreak(): void {
    this.closeActive();
    this.pieces.push(BREAK);
    this.pendingSpace = false;
    this.lineHasContent = false;
  }

  openSpan(kind: SpanKind, href = ''): void {
    if (this.active.some((span) => span.kind === kind)) {
      this.spans.push(null);
      return;
    }
    const span: Span = { kind, href, opened: undefined };
    this.spans.push(span);
    this.active.push(span);
  }

  closeSpan(): void {
    const span = this.spans.pop();
    if (!span) return;
    this.active.pop();
    this.closeMarkup(span);
  }

  /** The paragraph's lines (joined by hard breaks), each still to be escaped at its start. */
  flush(): string[] {
    this.closeActive();
    while (this.pieces.at(-1) === BREAK) this.pieces.pop();
    this.pendingSpace = false;
    this.lineHasContent = false;
    // Every block flushes its paragraph, mostly an empty one: 1 MB of `<p></p>` makes 220,000.
    if (this.pieces.length === 0) return [''];
    const pieces = this.pieces;
    this.pieces = [];

    // Around each piece: the nearest characters that are not delimiters (text, other markup, or
    // '' at a line's ends). A delimiter's neighbours are these or other delimiters, depending on
    // which of those are left out: what is written must work with either (see delimiter()).
    // Text is escaped for any of the delimiters that may end up beside it (only `~` differs from
    // the others there: `*` and `_` are punctuation alike), and for the text beyond them.
    const textAfter: string[] = new Array<string>(pieces.length);
    const delimitersAfter: string[] = new Array<string>(pieces.length);
    for (let i = pieces.length - 1, after = '', delimiters = ''; i >= 0; i--) {
      textAfter[i] = after;
      delimitersAfter[i] = delimiters;
      const piece = pieces[i]!;
      if (typeof piece === 'object' && piece.delimiter) {
        piece.index = i;
        if (!delimiters.includes(piece.markdown[0]!)) delimiters += piece.markdown[0]!;
        continue;
      }
      after = piece === BREAK ? '' : firstChar(piece);
      delimiters = '';
    }
    const after = (i: number) => [firstChar(pieces[i + 1]), textAfter[i]!];
    const out: string[] = [];
    const lineEnds: number[] = [];
    let previous = '';
    let textBefore = '';
    // The delimiter characters written since the last text: two runs of one character would join.
    const cluster = new Set<string>();
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (typeof piece === 'object' && piece.delimiter) {
        const written = delimiter(piece, out, {
          before: [previous, textBefore],
          after: after(i),
          afterCloser: (closer) => after(closer.index!),
          cluster,
        });
        out.push(written);
        if (written !== '') {
          previous = written.at(-1)!;
          cluster.add(previous);
        }
        continue;
      }
      if (piece === BREAK) {
        lineEnds.push(out.length);
        previous = textBefore = '';
      } else if (typeof piece === 'string') {
        const before = [previous, textBefore, ...cluster];
        out.push(escapeInline(piece, before, [...after(i), ...delimitersAfter[i]!], { cell: this.cell }));
        previous = textBefore = piece.at(-1)!;
      } else {
        out.push(piece.markdown);
        previous = textBefore = piece.markdown.at(-1)!;
      }
      cluster.clear();
    }
    lineEnds.push(out.length);
    let start = 0;
    return lineEnds.map((end) => out.slice(start, (start = end)).join(''));
  }

  private push(text: string): void {
    const last = this.pieces.length - 1;
    if (typeof this.pieces[last] === 'string') this.pieces[last] += text;
    else this.pieces.push(text);
  }

  /** What comes before content: the space held back, then the delimiters of spans not opened yet. */
  private beginContent(leadingSpace: boolean): void {
    if ((this.pendingSpace || leadingSpace) && this.lineHasContent) this.push(' ');
    this.pendingSpace = false;
    for (const span of this.active) {
      if (span.opened) continue;
      // `**a****b**` is not two bold words: emphasis that follows one of its kind continues it.
      const last = this.pieces.at(-1);
      if (typeof last === 'object' && span.kind !== 'link' && last.kind === span.kind && last.opener) {
        this.pieces.pop();
        span.opened = last.opener;
        continue;
      }
      span.opened =
        span.kind === 'link'
          ? { markdown: '[', kind: 'link' }
          : { markdown: DELIMITERS[span.kind], kind: span.kind, delimiter: 'open' };
      this.pieces.push(span.opened);
    }
    this.lineHasContent = true;
  }

  private closeMarkup(span: Span): void {
    const opener = span.opened;
    if (!opener) return;
    span.opened = undefined;
    if (span.kind === 'link') {
      // A mail address linked to itself says no more than the address: it is written as text.
      const label = this.pieces.at(-1);
      if (
        this.pieces.at(-2) === opener &&
        typeof label === 'string' &&
        span.href.toLowerCase() === `mailto:${label.toLowerCase()}`
      ) {
        this.pieces.splice(-2, 1);
        return;
      }
      this.pieces.push({ markdown: `](${linkDestination(span.href)})`, kind: span.kind, opener });
      return;
    }
    // Written as its opening delimiter is, once that is settled.
    opener.closer = { markdown: opener.markdown, kind: span.kind, opener, delimiter: 'close' };
    this.pieces.push(opener.closer);
  }

  private closeActive(): void {
    for (let i = this.active.length - 1; i >= 0; i--) this.closeMarkup(this.active[i]!);
  }
}

function firstChar(piece: Piece | undefined): string {
  if (piece === undefined || piece === BREAK) return '';
  return typeof piece === 'string' ? piece[0]! : piece.markdown[0]!;
}

/**
 * A delimiter as written, given the characters that may stand around it: the adjacent ones and
 * the nearest non-delimiters (they differ when delimiters in between are left out). CommonMark
 * reads `*`, `_` and `~~` as opening only when left-flanking and as closing only when
 * right-flanking, and two runs of one character written side by side as one run. `_` moreover
 * neither opens nor closes inside a word, so emphasis is `*` where a word may stand outside
 * either of its delimiters. A pair that cannot stand where it is, whatever its neighbours turn
 * out to be (`a<em>)</em>`, which Markdown cannot say), is left out: the text stays, without its
 * emphasis.
 */
function delimiter(
  piece: Markup,
  out: string[],
  around: {
    before: string[];
    after: string[];
    /** The characters that may follow the closing delimiter of an opening one. */
    afterCloser: (closer: Markup) => string[];
    /** The delimiter characters written since the last text. */
    cluster: ReadonlySet<string>;
  },
): string {
  const flanks = (test: (before: string, after: string) => boolean) =>
    around.before.every((before) => around.after.every((after) => test(before, after)));
  if (piece.delimiter === 'open') {
    if (piece.kind === 'em') {
      const wordOutside = [...around.before, ...around.afterCloser(piece.closer!)].some(isWordChar);
      piece.markdown = wordOutside ? '*' : '_';
    }
    if (!flanks(leftFlanking) || around.cluster.has(piece.markdown[0]!)) {
      piece.dropped = true;
      return '';
    }
    piece.slot = out.length;
    return piece.markdown;
  }
  const opener = piece.opener!;
  if (opener.dropped) return '';
  if (!flanks(rightFlanking) || around.cluster.has(opener.markdown[0]!)) {
    out[opener.slot!] = '';
    return '';
  }
  return opener.markdown;
}

/** CommonMark: not followed by whitespace, and not by punctuation unless preceded by whitespace or punctuation. */
function leftFlanking(before: string, after: string): boolean {
  return !isSpace(after) && (isWordChar(after) || !isWordChar(before));
}

function rightFlanking(before: string, after: string): boolean {
  return !isSpace(before) && (isWordChar(before) || !isWordChar(after));
}

/** A quote or list item: its first line starts with `marker`, the others with `indent`. */
interface Container {
  marker: string;
  indent: string;
  markerWritten: boolean;
  hasContent: boolean;
}

interface List {
  ordered: boolean;
  next: number;
  items: number;
}

export class MarkdownWriter {
  private readonly lines: string[] = [];
  private paragraph = new Paragraph(false);
  /** The paragraph a table cell interrupted. */
  private outside: Paragraph | undefined;
  private blankLineBefore = false;
  private readonly containers: Container[] = [];
  /** Containers past the maximum depth, written at it. */
  private overflow = 0;
  /** The containers around the last line written: a blank line keeps those still open. */
  private written: Container[] = [];
  private readonly lists: List[] = [];
  private heading = { level: 0, depth: 0 };
  private table: string[][] | undefined;
  /** The current line holds nothing but a no-break space: a blank line, when it ends so. */
  private spaceLine = false;

  text(text: string): void {
    if (!this.paragraph.hasLineContent && text.includes('\u00a0') && text.trim() === '') this.spaceLine = true;
    this.paragraph.text(text);
  }

  openSpan(kind: SpanKind, href?: string): void {
    this.paragraph.openSpan(kind, href);
  }

  closeSpan(): void {
    this.paragraph.closeSpan();
  }

  image(alt: string, src: string): void {
    const label = escapeInline(alt.replace(/\s+/g, ' ').trim(), '', '', { cell: this.paragraph.cell });
    this.paragraph.markup(`![${label}](${linkDestination(src)})`);
  }

  code(text: string): void {
    this.paragraph.code(text);
  }

  /** A <br>: a hard break, or a paragraph break where the line is still empty (`<br><br>`). */
  lineBreak(): void {
    if (this.paragraph.cell || this.heading.depth > 0) this.paragraph.space();
    else if (this.paragraph.hasLineContent) {
      this.paragraph.hardBreak();
      this.spaceLine = false;
    } else this.block();
  }

  /** The start or end of a block: what follows is a new paragraph. In a table cell, a space. */
  block(): void {
    this.spaceLine = false;
    if (this.paragraph.cell) return this.paragraph.space();
    this.endParagraph();
    this.separate();
  }

  /** The start of a block that is a line (a <div>): what follows starts a line. */
  startLine(): void {
    this.endLine(false);
  }

  /**
   * The end of a line block: what follows starts a line. A line that held only a no-break space
   * (or nothing, when `blankIfEmpty`) was a blank line: what follows is a new paragraph.
   */
  endLine(blankIfEmpty: boolean): void {
    if (this.paragraph.cell || this.heading.depth > 0) return this.paragraph.space();
    if (this.paragraph.hasLineContent) this.paragraph.hardBreak();
    else if (this.spaceLine || blankIfEmpty) this.block();
    this.spaceLine = false;
  }

  /** The index the next line written will have, once the paragraph being written is ended. */
  nextLine(): number {
    this.block();
    return this.lines.length;
  }

  codeBlock(code: string): void {
    if (this.paragraph.cell) return this.code(code);
    this.block();
    const fence = backticks(code, 3);
    this.write([fence, ...code.replace(/\n$/, '').split('\n'), fence]);
    this.separate();
  }

  rule(): void {
    if (this.paragraph.cell) return this.paragraph.space();
    this.block();
    this.write(['---']);
    this.separate();
  }

  startHeading(level: number): void {
    if (this.heading.depth++ > 0 || this.paragraph.cell) return;
    this.block();
    this.heading.level = level;
  }

  endHeading(): void {
    if (--this.heading.depth > 0 || this.paragraph.cell) return;
    const text = this.paragraph.flush().join(' ');
    if (text !== '') this.write([`${'#'.repeat(this.heading.level)} ${escapeHeadingEnd(text)}`]);
    this.separate();
  }

  startQuote(): void {
    this.block();
    this.push({ marker: '> ', indent: '> ', markerWritten: false, hasContent: false });
  }

  endQuote(): void {
    this.endParagraph();
    this.pop();
    this.separate();
  }

  startList(ordered: boolean, start: number): void {
    this.endParagraph();
    // A list inside an item goes on the item's next line, keeping the outer list tight.
    if (this.lists.length === 0) this.separate();
    this.lists.push({ ordered, next: start, items: 0 });
  }

  endList(): void {
    this.endParagraph();
    this.lists.pop();
    this.separate();
  }

  startItem(): void {
    this.endParagraph();
    const list = this.lists.at(-1)!;
    if (list.items++ > 0) this.blankLineBefore = false; // a tight list
    const marker = list.ordered ? `${list.next++}. ` : '- ';
    this.push({ marker, indent: ' '.repeat(marker.length), markerWritten: false, hasContent: false });
  }

  endItem(): void {
    this.endParagraph();
    this.pop();
  }

  startTable(): void {
    this.block();
    this.table = [];
  }

  startRow(): void {
    this.table?.push([]);
  }

  startCell(): void {
    this.outside = this.paragraph;
    this.paragraph = new Paragraph(true);
  }

  endCell(): void {
    this.table?.at(-1)?.push(this.paragraph.flush().join(' '));
    this.paragraph = this.outside!;
    this.outside = undefined;
  }

  endTable(): void {
    const rows = this.table!.filter((row) => row.some((cell) => cell !== ''));
    this.table = undefined;
    this.block();
    if (rows.length > 0) this.write(tableLines(rows));
    this.separate();
  }

  toString(): string {
    this.endParagraph();
    return this.lines.join('\n');
  }

  private endParagraph(): void {
    const lines = this.paragraph.flush();
    if (lines.length === 1 && lines[0] === '') return;
    this.write(lines.map(escapeLineStart));
  }

  /** Asks for a blank line before what comes next, unless it is the first content of a quote or item. */
  private separate(): void {
    const container = this.containers.at(-1);
    if (!container || container.hasContent) this.blankLineBefore = true;
  }

  private write(lines: string[]): void {
    if (this.blankLineBefore && this.lines.length > 0) {
      let common = 0;
      while (common < this.written.length && this.written[common] === this.containers[common]) common++;
      this.lines.push(
        this.containers
          .slice(0, common)
          .map((container) => container.indent)
          .join('')
          .trimEnd(),
      );
    }
    this.blankLineBefore = false;
    for (const line of lines) {
      const prefix = this.containers
        .map((container) => {
          if (container.markerWritten) return container.indent;
          container.markerWritten = true;
          return container.marker;
        })
        .join('');
      this.lines.push(line === '' ? prefix.trimEnd() : prefix + line);
    }
    for (const container of this.containers) container.hasContent = true;
    this.written = [...this.containers];
  }

  private push(container: Container): void {
    if (this.containers.length < MAX_CONTAINER_DEPTH) this.containers.push(container);
    else this.overflow++;
  }

  private pop(): void {
    if (this.overflow > 0) this.overflow--;
    else this.containers.pop();
  }
}

/** A GFM table: the first row is its header; columns padded to line up while they are narrow. */
function tableLines(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 1, Math.min(cell.length, MAX_PADDED_WIDTH))));
  }
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  // The header has every column; a shorter row is filled in by the reader.
  const header = widths.map((_, i) => rows[0]![i] ?? '');
  return [line(header), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...rows.slice(1).map(line)];
}
