/**
 * Replies written in real mail clients (mailgun/talon's fixtures, test/fixtures/replies/) received
 * through the webhooks, as an agent's inbox gets them: the stored message has the client's subject
 * and sender, and content_clean is the new text alone, without the quoted history, the reply
 * header, the signature or the mobile footer: what test/fixtures/replies/expected.ts states, the
 * expectations test/content-replies.test.ts checks on the content rules alone (with many more cases).
 * The fixtures known to come out wrong are tested to fail, so that one that starts passing is noticed.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { appRoot } from '../../src/paths.js';
import { createTestContext, type TestContext } from '../context.js';
import { preview } from '../../src/messages/content/index.js';
import { CORPUS } from '../fixtures/replies/corpus.js';
import { EML_EXPECTED, HTML_REPLY, KNOWN_MISSES } from '../fixtures/replies/expected.js';
import { fixture, mimeMessage, postSns, sesNotification } from './helpers.js';

let ctx: TestContext;
let inbox: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Replies', email_username: 'replies' })).body;
});
afterAll(() => ctx.close());

const EML = readdirSync(path.join(appRoot, 'test', 'fixtures', 'replies', 'eml')).filter((name) => name.endsWith('.eml'));
const HTML = readdirSync(path.join(appRoot, 'test', 'fixtures', 'replies', 'html')).filter((name) => name.endsWith('.html.txt'));

/** Posts a raw mail to the Mailgun route webhook for the inbox, and reads back the message stored. */
async function receivedThroughMailgun(raw: string) {
  const res = await request(ctx.app).post('/webhooks/mailgun').field('body-mime', raw).field('recipient', inbox.email_address);
  expect(res.status).toBe(200);
  return (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
}

const testOrMiss = (name: string) => (name in KNOWN_MISSES ? it.failing : it);
const headerOf = (raw: string, name: string) => new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(raw)?.[1];

describe('talon’s replies of mail clients, through the SES webhook', () => {
  describe.each(EML)('%s', (name) => {
    testOrMiss(name)('content_clean is the new text alone', async () => {
      const raw = fixture(`replies/eml/${name}`).toString('latin1');
      const res = await postSns(
        ctx.app,
        sesNotification(Buffer.from(raw, 'latin1'), { recipients: [inbox.email_address], encoding: 'BASE64' }),
      );
      expect(res.status).toBe(200);
      const message = (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
      expect(message.content_clean).toBe(EML_EXPECTED[name]);
      const from = headerOf(raw, 'From');
      if (from) expect(from.toLowerCase()).toContain(message.from_address);
      expect(message.subject.length).toBeGreaterThan(0);
    });
  });
});

describe('talon’s HTML replies, through the Mailgun webhook (body-mime)', () => {
  describe.each(HTML)('%s', (name) => {
    testOrMiss(name)('content_clean is the new text alone', async () => {
      const html = fixture(`replies/html/${name}`).toString('utf8');
      const raw = mimeMessage({
        to: inbox.email_address,
        subject: `Re: ${name}`,
        contentType: 'text/html; charset=utf-8',
        body: html,
      });
      const message = await receivedThroughMailgun(raw);
      expect(message.content_clean).toBe(HTML_REPLY);
    });
  });
});

// A few of the corpus's replies (test/fixtures/replies/corpus) as they arrive: a quoted-printable
// text part, HTML-only messages, and one that is only a quote, whose content_clean and preview
// are empty.
const THROUGH_WEBHOOK = [
  'github/quote_reply_spanish_multiline.txt',
  'crisp-oss/email_23.txt',
  'talon/gmail_quote.html.txt',
  'talon/readable_html_empty.html.txt',
];

describe('replies of the corpus, through the Mailgun webhook (body-mime)', () => {
  it.each(CORPUS.filter((reply) => THROUGH_WEBHOOK.includes(reply.file)).map((reply) => [reply.file, reply] as const))(
    '%s: content_clean is the reply, the preview its start',
    async (file, reply) => {
      const raw = mimeMessage({
        to: inbox.email_address,
        subject: `Re: ${file}`,
        contentType: `text/${reply.html ? 'html' : 'plain'}; charset=utf-8`,
        extraHeaders: reply.quotedPrintable ? ['Content-Transfer-Encoding: quoted-printable'] : [],
        body: fixture(`replies/corpus/${file}`).toString('utf8'),
      });
      const message = await receivedThroughMailgun(raw);
      expect(message.content_clean).toBe(reply.expected);
      expect(message.preview).toBe(preview(reply.expected));
    },
  );
});

describe('an agent’s reply to a real client’s mail', () => {
  it('carries References as RFC 5322 builds them when the mail has In-Reply-To and no References (yahoo.eml)', async () => {
    const received = await receivedThroughMailgun(fixture('replies/eml/yahoo.eml').toString('latin1'));
    expect(received).toMatchObject({ in_reply_to: '<1333374262.7063.15.camel@mg5>', references: null });
    const reply = (await request(ctx.app).post(`/v1/messages/${received.id}/reply`).send({ body: 'Thanks.' }).expect(201)).body;
    const sent = (await request(ctx.app).get(`/v1/messages/${reply.id}`).expect(200)).body;
    expect(sent).toMatchObject({
      in_reply_to: '<1333374330.68772.YahooMailNeo@web114411.mail.gq1.yahoo.com>',
      references: '<1333374262.7063.15.camel@mg5> <1333374330.68772.YahooMailNeo@web114411.mail.gq1.yahoo.com>',
    });
  });
});
