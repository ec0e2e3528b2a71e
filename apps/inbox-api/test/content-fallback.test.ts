/**
 * The fallback `content_clean` of received mail whose cleaning failed
 * (src/messages/content/fallback.ts): pure functions, tested directly.
 */
import { FALLBACK_CONTENT_CHARS, fallbackContent } from '../src/messages/content/index.js';
import { htmlText } from '../src/messages/content/fallback.js';

describe('fallbackContent', () => {
  it('is the plain text, line ends as LF, what could run as HTML escaped', () => {
    expect(fallbackContent({ text: 'Hi,\r\n<script>alert(1)</script> & [x](javascript:y)\r\n', html: '<p>ignored</p>' })).toEqual(
      {
        contentClean: 'Hi,\n\\<script>alert(1)\\</script> & [x\\](javascript:y)',
        preview: 'Hi, <script>alert(1)</script> & [x](javascript:y)',
        source: 'text',
        truncated: false,
      },
    );
  });

  it('cuts the text at FALLBACK_CONTENT_CHARS, whatever its size, and says so', () => {
    const { contentClean, truncated, preview } = fallbackContent({ text: 'word '.repeat(2_000_000), html: '' });
    expect(contentClean).toBe('word '.repeat(FALLBACK_CONTENT_CHARS / 5).trim());
    expect(truncated).toBe(true);
    expect(preview).toMatch(/^word word .*…$/);
    expect(preview.length).toBeLessThanOrEqual(121);
  });

  it('leaves no broken UTF-16 where the cut falls inside a character', () => {
    const { contentClean } = fallbackContent({ text: `${'a'.repeat(FALLBACK_CONTENT_CHARS - 1)}😀`, html: '' });
    expect(contentClean.isWellFormed()).toBe(true);
    expect(contentClean.endsWith('a\uFFFD')).toBe(true);
  });

  it('takes the text of the HTML when the plain text is blank', () => {
    expect(fallbackContent({ text: ' \n ', html: '<p>Hello <b>there</b></p><p>Bye</p>' })).toMatchObject({
      contentClean: 'Hello there\n\nBye',
      source: 'html',
      truncated: false,
    });
  });

  it('reads at most 200,000 characters of HTML, and says it cut it', () => {
    const html = `<p>start</p>${'<br>'.repeat(50_000)}<p>never read</p>`;
    expect(fallbackContent({ text: '', html })).toEqual(expect.objectContaining({ contentClean: 'start', truncated: true }));
  });

  it('is empty for an empty mail', () => {
    expect(fallbackContent({ text: '', html: '' })).toEqual({ contentClean: '', preview: '', source: 'text', truncated: false });
  });
});

describe('htmlText', () => {
  it.each([
    [
      'tags go; a block element starts a line',
      '<div>one<span> two</span></div><ul><li>three</li><li>four</li></ul>',
      'one two\n\nthree\n\nfour',
    ],
    [
      'comments, head, style, script and template go with their content',
      '<head><title>T</title></head><!-- a <p> -->x<style>p{}</style><script>if (a<b) y()</script><template><p>t</p></template>y',
      'xy',
    ],
    [
      'entities are decoded, unknown ones kept',
      'a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#x27; &nbsp;f &#x1F600; &bogus; &#0;',
      'a & b <c> "d" \'e\' f 😀 &bogus; \uFFFD',
    ],
    ['blank runs fold, three line ends or more become two', '<p>  a \t b  </p><p></p><p></p><p></p><p>c</p>', 'a b\n\nc'],
    ['upper-case tags are tags', '<P>a</P><SCRIPT>x</SCRIPT><BR>b', 'a\n\nb'],
    ['a closing hidden tag alone hides nothing', '</script>a</style>b', 'ab'],
    ['an unclosed tag at the end shows nothing', 'a<p class="x', 'a'],
    ['an unclosed comment or hidden element hides the rest', 'a<!-- b <p>c', 'a'],
    ['a `<` that opens no tag is text', 'a < b and 1<2 > d', 'a < b and 1<2 > d'],
  ])('%s', (_case, html, text) => {
    expect(htmlText(html)).toBe(text);
  });

  it('reads hostile HTML of megabytes in one pass', () => {
    for (const html of ['<'.repeat(2_000_000), '<!--'.repeat(500_000), '<script'.repeat(300_000), '<p>&amp;'.repeat(250_000)]) {
      expect(htmlText(html).length).toBeLessThanOrEqual(html.length);
    }
  });
});
