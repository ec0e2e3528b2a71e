import request from 'supertest';
import type { InboundMail } from '../src/messages/inbound-mail.js';
import { receiveMessage } from '../src/messages/receive.js';
import { createTestContext, type TestContext } from './context.js';
import { storableInboundMail } from './webhooks/helpers.js';

let ctx: TestContext;
let inbox: { id: string };

const mail = (fields: Partial<InboundMail>) =>
  storableInboundMail({ to: ['search@inbox.test'], text: 'Nothing special', size: 100, ...fields });

const receiveDeps = () => ({
  ...ctx.deps,
  emailDomain: 'inbox.test',
  leaseSeconds: 60,
  inlineMaxBytes: ctx.deps.config.INBOX_INLINE_ATTACHMENT_BYTES,
});

async function receive(fields: Partial<InboundMail>) {
  const record = await ctx.db.inbox.findUniqueOrThrow({ where: { id: inbox.id } });
  const stored = await mail(fields);
  const { message } = await receiveMessage(receiveDeps(), record, stored, () => ctx.deps.content.cleanMessage(stored));
  return message;
}

async function search(q: string, extra = '') {
  const res = await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&q=${encodeURIComponent(q)}${extra}`);
  expect(res.status).toBe(200);
  return res.body as { items: { id: string; subject: string }[]; count: number; total: number };
}

const subjects = (page: { items: { subject: string }[] }) => page.items.map((item) => item.subject).sort();

beforeAll(async () => {
  ctx = await createTestContext();
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Search', email_username: 'search' })).body;
  await receive({ subject: 'Invoice March', text: 'Please pay' });
  await receive({ subject: 'Lunch', text: 'The INVOICE is attached', from: 'billing@vendor.example' });
  await receive({ subject: 'Hello from Zed', from: 'Zed.Ziller@Example.org' });
  await receive({
    subject: 'Files',
    attachments: [{ filename: 'Quarterly-Report.PDF', contentType: 'application/pdf', content: Buffer.from('%PDF') }],
  });
  await receive({ subject: 'Discount 100% off', text: 'a_b c\\d' });
  await receive({ subject: 'Discount 1000 off', text: 'axb cxd' });
  // Another inbox's match must never show up.
  const elsewhere = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Else', email_username: 'else' })).body;
  await receiveMessage(
    receiveDeps(),
    await ctx.db.inbox.findUniqueOrThrow({ where: { id: elsewhere.id } }),
    await mail({ subject: 'Invoice elsewhere' }),
    () => Promise.resolve({ contentClean: 'Nothing special', preview: 'Nothing special' }),
  );
});
afterAll(() => ctx.close());

describe('GET /v1/messages?q=', () => {
  it('matches the subject and the text body, whatever the case', async () => {
    expect(subjects(await search('invoice'))).toEqual(['Invoice March', 'Lunch']);
    expect(subjects(await search('InVoIcE'))).toEqual(['Invoice March', 'Lunch']);
  });

  it('matches the sender address', async () => {
    expect(subjects(await search('zed.ziller@'))).toEqual(['Hello from Zed']);
    expect(subjects(await search('vendor.example'))).toEqual(['Lunch']);
  });

  it('matches attachment filenames', async () => {
    expect(subjects(await search('quarterly-report.pdf'))).toEqual(['Files']);
  });

  it('takes %, _ and \\ literally', async () => {
    expect(subjects(await search('100%'))).toEqual(['Discount 100% off']);
    expect(subjects(await search('a_b'))).toEqual(['Discount 100% off']);
    expect(subjects(await search('c\\d'))).toEqual(['Discount 100% off']);
    expect(subjects(await search('%'))).toEqual(['Discount 100% off']);
  });

  it('treats SQL as text', async () => {
    expect((await search("' OR 1=1 --")).total).toBe(0);
    expect((await search("invoice'; DROP TABLE messages; --")).total).toBe(0);
    expect((await search('invoice')).total).toBe(2);
  });

  it('does not let a match span two fields', async () => {
    // "march" ends the subject and "sender" starts the address of the same message.
    expect((await search('march sender')).total).toBe(0);
  });

  it('returns the search subset of fields, with totals for pagination', async () => {
    const first = await search('discount', '&limit=1');
    expect(first).toMatchObject({ count: 1, total: 2 });
    expect(Object.keys(first.items[0]!).sort()).toEqual([
      'content_clean',
      'created_at',
      'from_address',
      'id',
      'inbox_id',
      'subject',
      'text',
      'thread_id',
    ]);
    const second = await search('discount', '&limit=1&offset=1');
    expect(second).toMatchObject({ count: 1, total: 2 });
    expect(second.items[0]!.id).not.toBe(first.items[0]!.id);
    expect(await search('discount', '&offset=5')).toMatchObject({ count: 0, total: 2, items: [] });
  });

  it('combines with thread_id', async () => {
    const [hit] = (await search('lunch')).items;
    const thread = await ctx.db.message.findUniqueOrThrow({ where: { id: hit!.id } });
    const res = await request(ctx.app).get(`/v1/messages?thread_id=${thread.threadId}&q=invoice`);
    expect(res.body).toMatchObject({ total: 1, items: [expect.objectContaining({ subject: 'Lunch' })] });
  });

  it('refuses an empty or control-character query', async () => {
    expect((await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&q=`)).status).toBe(400);
    expect((await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&q=a%0Ab`)).status).toBe(400);
  });
});

describe('redelivery', () => {
  it('stores a message once when the same Message-ID arrives again', async () => {
    const first = await receive({ subject: 'Once only', messageId: '<unique-1@example.com>' });
    const again = await receive({ subject: 'Once only', messageId: '<unique-1@example.com>' });
    expect(again.id).toBe(first.id);
    expect((await search('once only')).total).toBe(1);
  });

  it('puts a reply into the thread of the message it answers', async () => {
    const original = await receive({ subject: 'Question', messageId: '<q-1@example.com>' });
    const reply = await receive({
      subject: 'Re: Question',
      messageId: '<q-2@example.com>',
      inReplyTo: '<q-1@example.com>',
      references: '<q-1@example.com>',
    });
    // Same subject, no known reference, and nobody in common: another conversation.
    const unrelated = await receive({
      from: 'stranger@example.org',
      to: ['other@inbox.test'],
      subject: 'Re: Question',
      messageId: '<q-3@example.com>',
      references: '<unknown@example.com>',
    });
    expect(reply.threadId).toBe(original.threadId);
    expect(unrelated.threadId).not.toBe(original.threadId);
  });
});
