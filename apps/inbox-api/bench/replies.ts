/**
 * How many replies content_clean gets exactly: talon's fixtures and the project's own cases
 * (test/fixtures/replies), and the corpus of real replies from public reply parsers
 * (test/fixtures/replies/corpus), by kind, with the cases it misses and what it gave.
 *   pnpm --filter inbox-api bench:replies [--misses]
 */
import { parseArgs } from 'node:util';
import { messageContent } from '../src/messages/content/index.js';
import { REPLY_CASES } from '../test/fixtures/replies/cases.js';
import { CORPUS } from '../test/fixtures/replies/corpus.js';
import { EML_EXPECTED, HTML_REPLY } from '../test/fixtures/replies/expected.js';
import { corpusContent, emlContent, emlFiles, htmlContent, htmlFiles } from '../test/fixtures/replies/read.js';

const { values } = parseArgs({ options: { misses: { type: 'boolean', default: false } } });

interface Outcome {
  name: string;
  kind: string;
  expected: string;
  actual: string;
}

const rate = (outcomes: Outcome[]) => {
  const exact = outcomes.filter(({ expected, actual }) => expected === actual).length;
  return `${exact} / ${outcomes.length} (${((100 * exact) / outcomes.length).toFixed(1)}%)`;
};

const fixtures: Outcome[] = [
  ...(await Promise.all(
    emlFiles().map(async (file) => ({
      name: file,
      kind: 'talon eml',
      expected: EML_EXPECTED[file]!,
      actual: await emlContent(file),
    })),
  )),
  ...htmlFiles().map((file) => ({ name: file, kind: 'talon html', expected: HTML_REPLY, actual: htmlContent(file) })),
  ...REPLY_CASES.map(({ name, html, text, expected }) => ({
    name,
    kind: 'cases.ts',
    expected,
    actual: messageContent({ html: html ?? '', text: text ?? '' }).contentClean,
  })),
];
const corpus: Outcome[] = await Promise.all(
  CORPUS.map(async (reply) => ({
    name: reply.file,
    kind: reply.kind,
    expected: reply.expected,
    actual: await corpusContent(reply),
  })),
);

console.log('| set | exact |\n|---|---:|');
for (const [set, outcomes] of [
  ['fixtures: talon eml + html', fixtures.filter(({ kind }) => kind.startsWith('talon'))],
  ['fixtures: cases.ts', fixtures.filter(({ kind }) => kind === 'cases.ts')],
  ['corpus', corpus],
] as const) {
  console.log(`| ${set} | ${rate(outcomes)} |`);
}
console.log('\n| corpus kind | exact |\n|---|---:|');
for (const kind of [...new Set(corpus.map((outcome) => outcome.kind))].sort()) {
  console.log(`| ${kind} | ${rate(corpus.filter((outcome) => outcome.kind === kind))} |`);
}
if (values.misses) {
  for (const { name, kind, expected, actual } of [...fixtures, ...corpus].filter(
    (outcome) => outcome.expected !== outcome.actual,
  )) {
    console.log(`\n--- ${name} (${kind})\nexpected: ${JSON.stringify(expected)}\nactual:   ${JSON.stringify(actual)}`);
  }
}
