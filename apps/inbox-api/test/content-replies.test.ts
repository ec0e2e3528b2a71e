/**
 * content_clean of real replies: mailgun/talon's fixtures (test/fixtures/replies, Apache-2.0),
 * parsed with postal-mime and cleaned from their HTML and text parts as ingestion does, and the
 * replies of test/fixtures/replies/cases.ts. Each must come out exactly as stated.
 *
 * How the new text comes out: as the mail showed it, in Markdown. A line of its own (a <div>,
 * Outlook's MsoNormal paragraph, a <br>) is a line; a blank line (an empty <div>, `<br><br>`,
 * Outlook's `&nbsp;` paragraph, a <p>'s margin) separates paragraphs. So "Hi. I am fine." /
 * blank line / "Thanks," / "Alex" is `Hi. I am fine.\n\nThanks,\nAlex`, from HTML and from text
 * alike: a single newline is a line break in the Markdown the service reads (see render.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import PostalMime from 'postal-mime';
import { messageContent } from '../src/messages/content/index.js';
import { REPLY_CASES } from './fixtures/replies/cases.js';
import { EML_EXPECTED, HTML_REPLY, KNOWN_MISSES } from './fixtures/replies/expected.js';

const FIXTURES = path.join(__dirname, 'fixtures', 'replies');

async function fromEml(file: string): Promise<string> {
  const email = await PostalMime.parse(readFileSync(path.join(FIXTURES, 'eml', file)));
  return messageContent({ html: email.html ?? '', text: email.text ?? '' }).contentClean;
}

function fromHtml(file: string): string {
  return messageContent({ html: readFileSync(path.join(FIXTURES, 'html', file), 'utf8'), text: '' }).contentClean;
}

const emlFiles = readdirSync(path.join(FIXTURES, 'eml')).filter((file) => file.endsWith('.eml'));
const htmlFiles = readdirSync(path.join(FIXTURES, 'html'));
const testOrMiss = (file: string) => (file in KNOWN_MISSES ? it.failing : it);

describe('content_clean of talon’s replies', () => {
  it('has an expectation for every eml fixture', () => {
    expect(emlFiles.sort()).toEqual(Object.keys(EML_EXPECTED).sort());
    expect(htmlFiles).toHaveLength(9);
  });

  describe.each(emlFiles)('%s', (file) => {
    testOrMiss(file)('is the new text', async () => {
      expect(await fromEml(file)).toBe(EML_EXPECTED[file]);
    });
  });

  describe.each(htmlFiles)('%s', (file) => {
    testOrMiss(file)('is "Hi. I am fine." / "Thanks," / "Alex"', () => {
      expect(fromHtml(file)).toBe(HTML_REPLY);
    });
  });

  it('gets at least 90% of them exactly', async () => {
    const results = [
      ...(await Promise.all(emlFiles.map(async (file) => (await fromEml(file)) === EML_EXPECTED[file]))),
      ...htmlFiles.map((file) => fromHtml(file) === HTML_REPLY),
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
