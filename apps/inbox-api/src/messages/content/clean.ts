import { escapeWrittenLine } from './escape.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { parseHtml } from './html-tree.js';
import {
  HEADER_BLOCK_LINES,
  MAX_ATTRIBUTION_LENGTH,
  headerKind,
  introducesQuote,
  isAttribution,
  isDisclaimer,
  isEmptyQuoteLine,
  isForwardIntro,
  isHeaderBlock,
  isMobileFooter,
  isOriginalMessageLine,
  isQuoteLine,
  isRule,
  isSignatureDelimiter,
  isSignatureRule,
  isWrapped,
  leadsAttribution,
  namesWriter,
  opensAttribution,
  plainLine,
  startsWithAttribution,
} from './reply-lines.js';

/**
 * `content_clean`: the message's own new content as Markdown. HTML (preferred when present) is
 * converted to Markdown without the signature blocks mail programs mark, then cleaned by the
 * line rules that also clean plain-text mail: quoted history, reply and forward headers,
 * signatures and mobile footers go; the text written between quotes stays, with the quotes it
 * answers. A message with nothing new has the message it forwards as its content, and none when
 * it is only quotes.
 */
export function cleanContent(body: { html?: string; text?: string }): string {
  const html = body.html !== undefined && /\S/.test(body.html) ? readHtml(body.html) : undefined;
  const htmlReply = html && tidy(html.reply);
  if (htmlReply) return htmlReply;
  const text =
    body.text !== undefined && /\S/.test(body.text) ? readReply(body.text.replace(/\r\n?/g, '\n').split('\n')) : undefined;
  const textReply = text && tidy(escapeWritten(text.reply));
  if (textReply) return textReply;
  return (html && tidy(html.quoted)) || (text ? tidy(escapeWritten(text.quoted)) : '');
}

function readHtml(html: string): Reading {
  const { markdown, quoteStartLine } = htmlToMarkdown(parseHtml(html));
  return readReply(markdown.split('\n'), quoteStartLine);
}

/**
 * A plain-text body is taken as the Markdown its writer (often an agent) may have meant, with only
 * what could run as HTML or link somewhere unsafe escaped. Fenced code is left as it is: only a
 * fence opened at the start of a line is sure to be one, whatever lines come before it.
 */
function escapeWritten(lines: string[]): string[] {
  const inFence = fenceMap(lines, 0);
  return lines.map((line, i) => (inFence[i] ? line : escapeWrittenLine(line)));
}

// ---------------------------------------------------------------------------------------------
// The reply in the lines of a message (plain text, or the Markdown made from HTML). Lines inside
// code fences are content and never match a rule. Each line is looked at a bounded number of
// times: linear.

interface Reading {
  /** The new content: what was written, and, in an interleaved reply, the quotes it answers. */
  reply: string[];
  /** The content of a message that has nothing new (see quotedPart). */
  quoted: string[];
}

/** A message's lines as the rules read them. */
interface Lines {
  raw: readonly string[];
  /** Without markup, trimmed (plainLine); '' inside code fences, where no rule applies. */
  plain: readonly string[];
  /** Blank: whitespace only, outside code fences (a line of escaped markup alone, `\_`, is content). */
  blank: readonly boolean[];
  /** Inside a code fence (fence lines included). */
  fenced: readonly boolean[];
  /** A `>` quote line (outside code fences). */
  quote: readonly boolean[];
  /** For each line, the index of the next line that is not blank (`raw.length` when none). */
  next: readonly number[];
}

/** A run of quote lines, or of other lines; blank lines go with the run they stand in. */
interface Run {
  quote: boolean;
  start: number;
  end: number;
}

function readLines(raw: string[]): Lines {
  const inFence = fenceMap(raw, 3);
  const plain = raw.map((line, i) => (inFence[i] ? '' : plainLine(line)));
  const blank = raw.map((line, i) => !inFence[i] && /^\s*$/.test(line));
  const next = new Array<number>(raw.length);
  for (let i = raw.length - 1, after = raw.length; i >= 0; i--) {
    next[i] = after;
    if (!blank[i]) after = i;
  }
  const quote = raw.map((line, i) => !inFence[i] && isQuoteLine(line));
  for (let i = 1; i < raw.length; i++) {
    if (quote[i - 1] && !quote[i] && !blank[i] && !inFence[i] && continuesQuote(raw[i - 1]!, plain[i]!)) quote[i] = true;
  }
  return { raw, plain, blank, fenced: inFence, quote, next };
}

// What a quote line quotes, without its markers.
const QUOTE_MARKERS = /^(?:\s*\\?>)+\s?/;
/** Mail apps wrap lines at this width, or less. */
const WRAP_WIDTH = 78;

/**
 * A line right below a quote line that goes on with it: the quoted sentence, wrapped by a mail
 * app (Gmail's Android app) after the quote markers were written, so the rest lost them. The
 * quote line stops mid-sentence where the next word would not have fitted, and the line goes on
 * in lower case; an answer written right below a quote does not look like that.
 */
function continuesQuote(quoteLine: string, plain: string): boolean {
  const line = quoteLine.trimEnd();
  const space = plain.indexOf(' ');
  const word = space < 0 ? plain.length : space;
  return line.length + 1 + word > WRAP_WIDTH && !/[.!?:;。！？：]$/.test(line) && /^\p{Ll}/u.test(plain);
}

/**
 * The reply in `raw`, which ends where the quoted part begins: at a signature, a reply or forward
 * header, or `quoteStart` (where the HTML marked a quote). Before that, `>` quotes and what is
 * written between them alternate. A reply written below a quote (or above one) is the text alone;
 * one written between quotes (interleaved) keeps the quotes it answers, as an agent needs them to
 * read it. The attribution above a quote goes with it.
 */
function readReply(raw: string[], quoteStart = raw.length): Reading {
  const lines = readLines(raw);
  const runs: Run[] = [];
  let end = Math.min(quoteStart, raw.length);
  // Where the quoted part begins: its first quote, the attribution above that, or `end`.
  let quotedStart = end;
  for (let i = 0; i < end; i++) {
    if (!lines.quote[i] && lines.plain[i] !== '' && startsQuotedPart(lines, i)) {
      end = i;
      break;
    }
    const run = runs.at(-1);
    if (run && (run.quote === lines.quote[i] || lines.blank[i])) {
      run.end = i + 1;
      continue;
    }
    if (lines.quote[i] && run) run.end = withoutAttribution(lines, run);
    if (lines.quote[i]) quotedStart = Math.min(quotedStart, run ? run.end : i);
    runs.push({ quote: lines.quote[i]!, start: i, end: i + 1 });
  }
  return { reply: reply(lines, runs, end < raw.length), quoted: quotedPart(lines, Math.min(quotedStart, end)) };
}

/**
 * The content of a message with nothing new, from where its quoted part begins at `start`: all
 * of it when nothing was quoted (a photo sent "from my iPhone"), a signature that is all there is,
 * or the message it was sent above when that is a forward or Outlook's header block (a forward
 * without a comment); nothing when it is only quotes, as a chain of quotes is not the sender's.
 */
function quotedPart(lines: Lines, start: number): string[] {
  const { raw, plain, blank, fenced, quote } = lines;
  let from = start;
  if (from < raw.length && !fenced[from] && isSignatureDelimiter(raw[from]!)) {
    const signature = from;
    for (let i = from + 1; i < raw.length; i++) {
      if (quote[i] || (plain[i] !== '' && !isSignatureDelimiter(raw[i]!) && startsQuotedPart(lines, i))) {
        from = i;
        break;
      }
    }
    if (from === signature) return raw.slice(signature);
  }
  while (from < raw.length && (blank[from] || (!fenced[from] && isRule(raw[from]!)))) from++;
  if (from === raw.length) return start === raw.length ? raw.slice() : [];
  if (forwardedAt(lines, from)) return raw.slice(from);
  // Lines an HTML part showed with a ">" at their start (`\>` in its Markdown) are not marked as a
  // quote, as a blockquote or a text part's ">" is: when they are all there is, they are shown.
  if (quote[from] && !raw.slice(from).some((line) => MARKED_QUOTE.test(line))) return raw.slice(from);
  return [];
}

/** A quote marked as one: a text part's `>`, or the Markdown of an HTML blockquote. */
const MARKED_QUOTE = /^ {0,3}>/;

/**
 * Whether line `i` (quoted or not) begins a forwarded message: a forward's intro or separator,
 * "-----Original Message-----", a header block, or the sender's header line below a rule.
 */
function forwardedAt(lines: Lines, i: number): boolean {
  const { raw, fenced, next } = lines;
  if (fenced[i]) return false;
  const unquoted = (k: number) => plainLine(raw[k]!.replace(QUOTE_MARKERS, ''));
  const line = unquoted(i);
  if (isForwardIntro(line) || isOriginalMessageLine(line, next[i]! < raw.length ? unquoted(next[i]!) : undefined)) return true;
  if (headerKind(line) === 'from' && ruleAbove(lines, i)) return true;
  const block = raw.slice(i, i + HEADER_BLOCK_LINES).map((_line, k) => unquoted(i + k));
  return isHeaderBlock(block, 0);
}

/** A rule drawn right above line `i`, or above the blank line above it. */
function ruleAbove({ raw, blank, fenced }: Lines, i: number): boolean {
  const above = i >= 1 && blank[i - 1] ? i - 2 : i - 1;
  return above >= 0 && !fenced[above] && isRule(raw[above]!);
}

/**
 * Whether line `i` begins the quoted part, everything after it included: a signature, an
 * "-----Original Message-----" or forward line, a header block, or an attribution that no `>`
 * quote follows (an attribution above one goes with the quote: see withoutAttribution), also
 * one with the quote on its line.
 */
function startsQuotedPart(lines: Lines, i: number): boolean {
  const { raw, plain, quote, next } = lines;
  const line = plain[i]!;
  if (isSignatureDelimiter(raw[i]!) || isForwardIntro(line) || isOriginalMessageLine(line, plain[next[i]!])) return true;
  if (isHeaderBlock(plain, i) || startsWithAttribution(line)) return true;
  // The sender's header line below a rule (Outlook's and Hotmail's "____" or <hr>, and "From:").
  if (headerKind(line) === 'from' && ruleAbove(lines, i)) return true;
  // An attribution may wrap over up to three lines, from a line that starts as one, names the
  // sender or was wrapped (not from the writer's last line above one that starts on its own).
  const joins = (opensAttribution(line) || isWrapped(line) || line.includes('@')) && !leadsAttribution(plain[i + 1] ?? '');
  const last = joins ? i + 2 : i;
  // Built line by line (this runs for most lines): a line too long ends the search.
  let attribution = '';
  for (let j = i; j <= last && j < plain.length && plain[j] !== ''; j++) {
    if (plain[j]!.length > MAX_ATTRIBUTION_LENGTH) break;
    attribution = j === i ? line : `${attribution} ${plain[j]!}`;
    if (isAttribution(attribution)) return !quote[next[j]!];
  }
  return false;
}

/**
 * The end of a run of text once the attribution that ends it (above the quote that follows) is
 * left out: its last line, if that introduces a quote, with up to two lines above that it was
 * wrapped from (the earliest that starts as an attribution does, or from where all are wrapped).
 */
function withoutAttribution({ plain, blank }: Lines, run: Run): number {
  let last = run.end - 1;
  while (last >= run.start && blank[last]) last--;
  if (last < run.start) return run.end;
  for (let first = Math.max(run.start, last - 2); first <= last; first++) {
    const attribution = plain.slice(first, last + 1);
    // Only short lines with text are joined: the work stays bounded.
    if (attribution.some((line) => line === '' || line.length > MAX_ATTRIBUTION_LENGTH)) continue;
    const wrapped =
      first === last ||
      opensAttribution(plain[first]!) ||
      namesWriter(plain[first]!) ||
      attribution.slice(0, -1).every(isWrapped);
    if (wrapped && introducesQuote(attribution.join(' '))) return first;
  }
  return run.end;
}

/**
 * The reply's lines from the runs: the text runs (without the footers, blank lines and rules
 * left at their ends), and, when there are several (an interleaved reply), the quotes before the
 * last, each set apart by a blank line. `cut` tells that a quoted part followed the last run.
 */
function reply(lines: Lines, runs: readonly Run[], cut: boolean): string[] {
  const trimmed = runs.map((run, k) => (run.quote ? trimBlank(lines, run) : trimText(lines, run, cut || k < runs.length - 1)));
  const written = trimmed.filter((run) => !run.quote && run.end > run.start);
  // A notice the sender's server appended below the quote is not written between quotes (its
  // first lines tell).
  const last = written.at(-1);
  if (
    last &&
    trimmed.indexOf(last) > 0 &&
    isDisclaimer(lines.plain.slice(last.start, Math.min(last.end, last.start + 5)).join(' '))
  ) {
    written.pop();
  }
  if (written.length === 0) return [];
  if (written.length === 1) return lines.raw.slice(written[0]!.start, written[0]!.end);
  const kept: string[] = [];
  for (const run of trimmed.slice(0, trimmed.indexOf(written.at(-1)!) + 1)) {
    if (run.end <= run.start) continue;
    if (kept.length > 0) kept.push('');
    for (let i = run.start; i < run.end; i++) kept.push(lines.raw[i]!);
  }
  return kept;
}

/**
 * A run of text without blank lines and mobile footers at its ends, nor the rule above a quote
 * that `followed` it, nor a signature or a mailing list's footer below a long rule at its end.
 */
function trimText(lines: Lines, run: Run, followed: boolean): Run {
  const trimmed = trimBlank(lines, run);
  const { plain, blank, raw, fenced } = lines;
  const isEnd = (i: number) => blank[i] || isMobileFooter(plain[i]!) || (followed && !fenced[i] && isRule(raw[i]!));
  const trimEnd = () => {
    while (trimmed.end > trimmed.start && isEnd(trimmed.end - 1)) trimmed.end--;
  };
  trimEnd();
  const rule = signatureRule(lines, trimmed);
  if (rule !== undefined) {
    trimmed.end = rule;
    trimEnd();
  }
  return trimmed;
}

/** A signature has at most this many lines below its rule, none longer than this. */
const MAX_SIGNATURE_LINES = 4;
const MAX_SIGNATURE_LINE_LENGTH = 120;

/** The long rule a signature or a list's footer at the end of `run` stands below, if there is one and text above it. */
function signatureRule({ raw, blank, fenced, plain }: Lines, run: Run): number | undefined {
  let below = 0;
  for (let i = run.end - 1; i > run.start && below <= MAX_SIGNATURE_LINES; i--) {
    if (blank[i]) continue;
    if (!fenced[i] && isSignatureRule(raw[i]!)) return plain.slice(run.start, i).some((line) => line !== '') ? i : undefined;
    if (plain[i]!.length > MAX_SIGNATURE_LINE_LENGTH) return undefined;
    below++;
  }
  return undefined;
}

/** A run without blank lines (and, for a quote, empty quote lines) at its ends. */
function trimBlank({ raw, blank }: Lines, run: Run): Run {
  const isBlank = (i: number) => blank[i] || (run.quote && isEmptyQuoteLine(raw[i]!));
  let { start, end } = run;
  while (start < end && isBlank(start)) start++;
  while (end > start && isBlank(end - 1)) end--;
  return { quote: run.quote, start, end };
}

// A fence may stand in a list item: after its marker, or indented to its content.
const FENCE_OPEN = /^((?: *(?:[-+*]|\d{1,9}[.)]) +)*)( *)(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^( *)(`{3,}|~{3,})[ \t]*$/;

/**
 * For each line, whether it lies inside a fenced code block (fence lines included), as CommonMark
 * reads fences opened with at most `maxIndent` spaces (after the markers of the list items they
 * stand in, whose width then also indents the closing fence).
 */
function fenceMap(lines: string[], maxIndent: number): boolean[] {
  let open: { fence: string; width: number } | undefined;
  return lines.map((line) => {
    // A fence in a list item ends with the item: at a line indented less than the item's content.
    if (open && open.width > 0 && /\S/.test(line) && line.length - line.trimStart().length < open.width) open = undefined;
    if (open === undefined) {
      const opening = FENCE_OPEN.exec(line);
      if (opening === null) return false;
      const [, items, indent, fence, info] = opening;
      // A backtick fence's info string has no backtick: "``` `a` ```" is inline code.
      if (indent!.length > maxIndent || (fence!.startsWith('`') && info!.includes('`'))) return false;
      open = { fence: fence!, width: items!.length };
      return true;
    }
    const [, indent, close] = FENCE_CLOSE.exec(line) ?? [];
    if (
      close !== undefined &&
      indent!.length <= open.width + maxIndent &&
      close[0] === open.fence[0] &&
      close.length >= open.fence.length
    ) {
      open = undefined;
    }
    return true;
  });
}

/**
 * The lines (none holds a newline) as text: blank lines made empty, at most one in a row, none at
 * either end. Taken as lines, not as their text: joining and splitting 1 MB of short lines again
 * cost more than the rules.
 */
function tidy(text: readonly string[]): string {
  const lines: string[] = [];
  for (const line of text) {
    const blank = /^[ \t]*$/.test(line);
    if (!blank) lines.push(line);
    else if (lines.length > 0 && lines.at(-1) !== '') lines.push('');
  }
  if (lines.at(-1) === '') lines.pop();
  return lines.join('\n').trim();
}
