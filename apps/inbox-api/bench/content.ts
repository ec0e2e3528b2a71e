/**
 * Times the content rules on large and awkward mail: the cost every inbound message pays.
 *   pnpm --filter inbox-api bench:content
 */
import { performance } from 'node:perf_hooks';
import { cleanContent, renderMarkdown } from '../src/messages/content.js';

const paragraph =
  '<p>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, <a href="https://example.com">link</a>.</p>';
const story =
  '<tr><td><table role="presentation"><tr><td><h2>Story</h2><p>Some <b>news</b> text.</p></td></tr></table></td></tr>';
const cases: [string, () => unknown][] = [
  ['clean 1 MB of HTML paragraphs', () => cleanContent({ html: paragraph.repeat(Math.ceil(1_000_000 / paragraph.length)) })],
  [
    'clean a 1 MB newsletter of nested layout tables',
    () => cleanContent({ html: `<table>${story.repeat(Math.ceil(1_000_000 / story.length))}</table>` }),
  ],
  [
    'clean 1 MB of plain text with a quote',
    () => cleanContent({ text: `${'A line of plain text.\n'.repeat(45_000)}On Tue, Bob wrote:\n> old` }),
  ],
  ['clean a 1 MB line that starts like an attribution', () => cleanContent({ text: `On ${'x'.repeat(1_000_000)}` })],
  [
    'clean a typical 5 KB HTML reply',
    () =>
      cleanContent({
        html: `${paragraph.repeat(40)}<div class="gmail_quote">On Mon, A wrote:<blockquote>${paragraph.repeat(10)}</blockquote></div>`,
      }),
  ],
  [
    'render 100 KB of Markdown',
    () => renderMarkdown('# Title\n\nSome **bold** text and a [link](https://example.com).\n\n'.repeat(1500)),
  ],
];

console.log('| case | runs | median ms | max ms |\n|---|---|---|---|');
for (const [name, run] of cases) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`| ${name} | ${times.length} | ${times[2]!.toFixed(1)} | ${times.at(-1)!.toFixed(1)} |`);
}
