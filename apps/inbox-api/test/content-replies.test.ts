/**
 * content_clean of real replies: mailgun/talon's fixtures (test/fixtures/replies, Apache-2.0),
 * parsed with postal-mime and cleaned from their HTML and text parts as ingestion does, the
 * replies of test/fixtures/replies/cases.ts, and the corpus of replies from public reply parsers
 * (test/fixtures/replies/corpus). Each must come out exactly as stated.
 *
 * How the new text comes out: as the mail showed it, in Markdown. A line of its own (a <div>,
 * Outlook's MsoNormal paragraph, a <br>) is a line; a blank line (an empty <div>, `<br><br>`,
 * Outlook's `&nbsp;` paragraph, a <p>'s margin) separates paragraphs. So "Hi. I am fine." /
 * blank line / "Thanks," / "Alex" is `Hi. I am fine.\n\nThanks,\nAlex`, from HTML and from text
 * alike: a single newline is a line break in the Markdown the service reads (see render.ts).
 */
import { messageContent } from '../src/messages/content/index.js';
import { REPLY_CASES } from './fixtures/replies/cases.js';
import { CORPUS, CORPUS_MISSES } from './fixtures/replies/corpus.js';
import { EML_EXPECTED, HTML_REPLY, KNOWN_MISSES } from './fixtures/replies/expected.js';
import { corpusContent, corpusFiles, emlContent, emlFiles, htmlContent, htmlFiles } from './fixtures/replies/read.js';

const emls = emlFiles();
const htmls = htmlFiles();
const testOrMiss = (file: string) => (file in KNOWN_MISSES ? it.failing : it);

describe('content_clean of talon’s replies', () => {
  it('has an expectation for every eml fixture', () => {
    expect(emls.sort()).toEqual(Object.keys(EML_EXPECTED).sort());
    expect(htmls).toHaveLength(9);
  });

  describe.each(emls)('%s', (file) => {
    testOrMiss(file)('is the new text', async () => {
      expect(await emlContent(file)).toBe(EML_EXPECTED[file]);
    });
  });

  describe.each(htmls)('%s', (file) => {
    testOrMiss(file)('is "Hi. I am fine." / "Thanks," / "Alex"', () => {
      expect(htmlContent(file)).toBe(HTML_REPLY);
    });
  });

  it('gets at least 90% of them exactly', async () => {
    const results = [
      ...(await Promise.all(emls.map(async (file) => (await emlContent(file)) === EML_EXPECTED[file]))),
      ...htmls.map((file) => htmlContent(file) === HTML_REPLY),
    ];
    const exact = results.filter(Boolean).length;
    expect(exact).toBe(results.length - Object.keys(KNOWN_MISSES).length);
    expect(exact / results.length).toBeGreaterThanOrEqual(0.9);
  });
});

describe('content_clean of replies from common clients, in their languages', () => {
  it.each(REPLY_CASES.map((reply) => [reply.name, reply] as const))('%s', (_name, { html, text, expected }) => {
    expect(messageContent({ html: html ?? '', text: text ?? '' }).contentClean).toBe(expected);
  });
});

describe('content_clean of the corpus of replies from public reply parsers', () => {
  it('has a case for every file, and a reason for every miss', () => {
    expect(corpusFiles().sort()).toEqual(CORPUS.map((reply) => reply.file).sort());
    for (const file of Object.keys(CORPUS_MISSES)) expect(CORPUS.map((reply) => reply.file)).toContain(file);
  });

  describe.each(CORPUS.map((reply) => [reply.file, reply] as const))('%s', (file, reply) => {
    (file in CORPUS_MISSES ? it.failing : it)(`is the reply (${reply.kind})`, async () => {
      expect(await corpusContent(reply)).toBe(reply.expected);
    });
  });

  it('gets at least 90% of them exactly', async () => {
    const exact = (await Promise.all(CORPUS.map(async (reply) => (await corpusContent(reply)) === reply.expected))).filter(
      Boolean,
    );
    expect(exact).toHaveLength(CORPUS.length - Object.keys(CORPUS_MISSES).length);
    expect(exact.length / CORPUS.length).toBeGreaterThanOrEqual(0.9);
  });
});
