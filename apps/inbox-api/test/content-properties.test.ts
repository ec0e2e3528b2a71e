/**
 * Properties of content_clean over generated bodies (fast-check), read the way its consumers read
 * it: a Markdown renderer that passes raw HTML through (markdown-it with `html: true`, as many
 * clients configure theirs). Whatever the author wrote or the mail carried, the Markdown must
 * mean what the message showed: no live tag, no unsafe link, the same visible text. How long the
 * work takes on such bodies is measured by bench/content.ts, not here.
 */
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { cleanContent, preview, renderMarkdown } from '../src/messages/content/index.js';

// CONTENT_FUZZ_FACTOR=20 runs each property twenty times as often (by hand, when changing the content rules).
const RUNS_FACTOR = Number(process.env.CONTENT_FUZZ_FACTOR ?? 1);

const passthrough = new MarkdownIt({ html: true });

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const decodeHtml = (html: string) =>
  html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
/** What a reader sees of rendered HTML: its text, whitespace collapsed (inline elements add none). */
const visibleText = (html: string) =>
  decodeHtml(html.replace(/<\/?(?:strong|b|em|i|s|a|code)\b[^>]*>/g, '').replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();

// The elements markdown-it makes of Markdown; anything else in its output came through as raw HTML.
const MARKDOWN_ELEMENTS = new Set([
  'p',
  'br',
  'strong',
  'em',
  's',
  'a',
  'img',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'hr',
]);

/** The tags, attributes and link targets of rendered HTML that Markdown could not have made, if any. */
function liveMarkup(html: string): string[] {
  const found: string[] = [];
  for (const [tag, name, attributes] of html.matchAll(/<\/?([A-Za-z][\w-]*)([^>]*)>/g)) {
    if (!MARKDOWN_ELEMENTS.has(name!.toLowerCase())) found.push(tag);
    if (/\son\w+\s*=/i.test(attributes!)) found.push(tag);
    for (const [, url] of attributes!.matchAll(/(?:href|src)="([^"]*)"/g)) {
      if (!/^(https?:|mailto:|tel:|#|\/)/i.test(decodeHtml(url!))) found.push(tag);
    }
  }
  return found;
}

// Pieces of text that mean something to Markdown or HTML, and the attacks that use them.
const TEXT_PIECES = [
  ...'ab <>&*_`[]()!#-+=|~\\:/.;"\'\n1'.split(''),
  '    ',
  '\t',
  '***',
  '___',
  '~~',
  '==',
  '“é”',
  '> ',
  '# ',
  '1. ',
  '- ',
  '---',
  '```',
  '&amp;',
  '&#65;',
  '&lt;',
  'javascript:alert(1)',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '[click](javascript:alert(1))',
  '![x](javascript:alert(1))',
  '[ref]: javascript:alert(1)',
  '<!-- c -->',
  '<https://example.com>',
  'http://example.com/a_b',
  'snake_case',
  '2 * 3',
];
const writtenText = fc.array(fc.constantFrom(...TEXT_PIECES), { maxLength: 60 }).map((pieces) => pieces.join(''));

describe('content_clean of an HTML body', () => {
  it('shows the text the HTML showed, and nothing live, whatever the text', () => {
    fc.assert(
      fc.property(writtenText, (text) => {
        const rendered = passthrough.render(cleanContent({ html: `<p>${escapeHtml(text)}</p>` }));
        expect(liveMarkup(rendered)).toEqual([]);
        expect(visibleText(rendered)).toBe(text.replace(/\s+/g, ' ').trim());
      }),
      { numRuns: 3000 * RUNS_FACTOR },
    );
  });

  // Inline formatting as mail writers nest it, around text that means something to Markdown.
  const inline: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      writtenText.map((text) => escapeHtml(text.replace(/\n/g, ' '))),
      fc
        .tuple(
          fc.constantFrom('b', 'i', 's', 'em', 'strong', 'a href="https://example.com/"'),
          fc.array(tie('node'), { maxLength: 3 }),
        )
        .map(([tag, children]) => `<${tag}>${children.join('')}</${tag.split(' ')[0]}>`),
    ),
  })).node;

  it('shows the text of any nesting of bold, italic, struck-out and linked text', () => {
    fc.assert(
      fc.property(fc.array(inline, { maxLength: 4 }), (nodes) => {
        const html = `<p>${nodes.join('')}</p>`;
        const rendered = passthrough.render(cleanContent({ html }));
        expect(liveMarkup(rendered)).toEqual([]);
        expect(visibleText(rendered)).toBe(visibleText(html));
      }),
      { numRuns: 2000 * RUNS_FACTOR },
    );
  });

  // Tag soup: random nesting of the elements mail carries, some unclosed or stray, with hostile attributes.
  const element = fc.constantFrom(
    'p',
    'div',
    'span',
    'b',
    'i',
    's',
    'a href="https://example.com/x"',
    'a href="javascript:alert(1)"',
    'a href=" JaVaScRiPt:alert(1)"',
    'img src="https://example.com/i.png" alt="pic"',
    'img src=x onerror="alert(1)"',
    'img src="data:image/png;base64,AAAA"',
    'script',
    'style',
    'iframe src="https://evil.example"',
    'blockquote',
    'blockquote type="cite"',
    'ul',
    'ol',
    'li',
    'table',
    'tr',
    'td',
    'th',
    'h1',
    'h3',
    'pre',
    'code',
    'br',
    'hr',
    'svg onload="alert(1)"',
    'div style="display:none"',
    'div class="gmail_quote"',
  );
  const html = fc
    .array(
      fc.oneof(
        element.map((tag) => `<${tag}>`),
        element.map((tag) => `</${tag.split(' ')[0]}>`),
        writtenText.map(escapeHtml),
        fc.constantFrom('&nbsp;', '&amp;lt;script&amp;gt;', '&#0;', '&#xD800;', '<!-- x -->', '<![CDATA[x]]>', '<'),
      ),
      { maxLength: 80 },
    )
    .map((pieces) => pieces.join(''));

  it('never carries a tag, event handler or unsafe link into the Markdown, whatever the markup', () => {
    fc.assert(
      fc.property(html, (body) => {
        for (const clean of [cleanContent({ html: body }), cleanContent({ html: body, text: 'fallback' })]) {
          expect(liveMarkup(passthrough.render(clean))).toEqual([]);
          expect(typeof preview(clean)).toBe('string');
        }
      }),
      { numRuns: 2000 * RUNS_FACTOR },
    );
  });
});

describe('content_clean of a plain-text body', () => {
  it('keeps the writer’s links to safe places, also in angle brackets', () => {
    expect(cleanContent({ text: 'See [the docs](<https://example.com/a b>) and [mail](mailto:a@example.com).' })).toBe(
      'See [the docs](<https://example.com/a b>) and [mail](mailto:a@example.com).',
    );
  });

  it('keeps the writer’s Markdown but nothing that runs as HTML or links somewhere unsafe', () => {
    fc.assert(
      fc.property(writtenText, (text) => {
        expect(liveMarkup(passthrough.render(cleanContent({ text })))).toEqual([]);
      }),
      { numRuns: 3000 * RUNS_FACTOR },
    );
  });

  it.each([
    ['<script>alert(1)</script>', 'script'],
    ['<img src=x onerror=alert(1)>', 'img'],
    ['[click me](javascript:alert(1))', 'href'],
    ['<a href="javascript:alert(1)">click</a>', 'href'],
  ])('shows %s as the text it is', (text, live) => {
    const clean = cleanContent({ text });
    const rendered = passthrough.render(clean);
    expect(liveMarkup(rendered)).toEqual([]);
    expect(rendered).not.toContain(`<${live}`);
    expect(visibleText(rendered)).toBe(text);
  });
});

describe('a message written in Markdown, sent and read back', () => {
  it('reads back as the same visible text as the HTML that was sent, raw HTML included', () => {
    fc.assert(
      fc.property(writtenText, (markdown) => {
        const { html, text } = renderMarkdown(markdown);
        const clean = cleanContent({ html, text });
        expect(liveMarkup(passthrough.render(clean))).toEqual([]);
        // What the recipient saw, the content shows; quote and signature rules aside, which drop
        // quotes, what follows "-- " or an attribution, and rules left at the end.
        const quoteRules = /^\s*(>|--\s*$|On .*wrote:)|^\s*([-_*])(?:\s*\2){2,}\s*$/m;
        if (!quoteRules.test(markdown) && !quoteRules.test(text) && !/<(blockquote|hr)/.test(html)) {
          expect(visibleText(passthrough.render(clean))).toBe(visibleText(html));
        }
      }),
      { numRuns: 2000 * RUNS_FACTOR },
    );
  });
});
