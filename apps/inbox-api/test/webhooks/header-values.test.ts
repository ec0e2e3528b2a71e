/**
 * Values that the database cannot store or index as they come (issue 22): NUL bytes in
 * Message-IDs, ids and subjects too long for a btree row, a Date that is no date or one Postgres
 * cannot hold; NUL bytes and lone surrogates in content types and provider verdicts; a text body
 * whose full-text vector would pass Postgres's 1 MB. Each answered 500 and stored nothing (a
 * provider then drops the mail or retries it forever); each is stored, once, and threads, through
 * every provider and mode it can come by (src/messages/inbound-mail.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestContext, type TestContext } from '../context.js';
import { type MimeFields, mimeMessage, postSns, sesNotification } from './helpers.js';

let ctx: TestContext;
let agent: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  agent = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Agent', email_username: 'values' })).body;
});
afterAll(() => ctx.close());

/** The headers and body a test varies; From is Bob, To the agent. */
type Mail = Omit<MimeFields, 'from' | 'to' | 'cc'>;

const MODES = ['mailgun body-mime', 'mailgun fields', 'sendgrid raw', 'sendgrid fields', 'ses'] as const;
type Mode = (typeof MODES)[number];
const SENDER = 'Bob <bob@example.com>';

/** A header value as parsed fields carry it: unfolded (RFC 5322, 2.2.3). */
const unfold = (value: string) => value.replace(/\r\n(?=[ \t])/g, '');

/**
 * Posts `mail` from Bob to the agent as the provider of `mode` does: raw MIME, or parsed fields
 * (the subject unfolded, the header list as Mailgun lists it, the header block as SendGrid posts it).
 */
function deliver(mode: Mode, mail: Mail) {
  const raw = mimeMessage({ from: SENDER, to: agent.email_address, ...mail });
  const headers = [
    ['From', SENDER],
    ['To', agent.email_address],
    ['Subject', mail.subject],
    ...(mail.messageId === undefined ? [] : [['Message-Id', mail.messageId]]),
    ...(mail.inReplyTo === undefined ? [] : [['In-Reply-To', mail.inReplyTo]]),
    ...(mail.references === undefined ? [] : [['References', mail.references]]),
    ['Date', mail.date ?? new Date().toUTCString()],
  ];
  switch (mode) {
    case 'mailgun body-mime':
      return request(ctx.app).post('/webhooks/mailgun').field('body-mime', raw).field('recipient', agent.email_address);
    case 'mailgun fields':
      return request(ctx.app)
        .post('/webhooks/mailgun')
        .type('form')
        .send(
          new URLSearchParams({
            recipient: agent.email_address,
            from: SENDER,
            subject: unfold(mail.subject),
            'body-plain': mail.body,
            'message-headers': JSON.stringify(headers.map(([name, value]) => [name, unfold(value!)])),
          }).toString(),
        );
    case 'sendgrid raw':
      return request(ctx.app)
        .post('/webhooks/sendgrid')
        .field('email', raw)
        .field('envelope', JSON.stringify({ to: [agent.email_address] }));
    case 'sendgrid fields':
      return request(ctx.app)
        .post('/webhooks/sendgrid')
        .field('headers', headers.map(([name, value]) => `${name}: ${value}`).join('\r\n'))
        .field('from', SENDER)
        .field('to', agent.email_address)
        .field('subject', unfold(mail.subject))
        .field('text', mail.body)
        .field('envelope', JSON.stringify({ to: [agent.email_address] }));
    case 'ses':
      return postSns(ctx.app, sesNotification(raw, { recipients: [agent.email_address] }));
  }
}

interface Stored {
  message_id: string;
  thread_id: string;
  duplicate: boolean;
}

async function stored(mode: Mode, mail: Mail): Promise<Stored> {
  const res = await deliver(mode, mail);
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.objectContaining({ unrouted: [] }) });
  return res.body.messages[0] as Stored;
}

const messageOf = async (id: string) => (await request(ctx.app).get(`/v1/messages/${id}`)).body;
const unique = () => randomUUID().slice(0, 8);
/** Random text that no compression shrinks below the btree limit of ~2.7 KB. */
const randomText = (chars: number) => randomBytes(chars).toString('base64').slice(0, chars);

describe.each(MODES)('through %s', (mode) => {
  it('stores a Message-ID with a NUL byte cleaned, once, and a reply naming it in In-Reply-To joins its thread', async () => {
    const id = unique();
    const first = await stored(mode, { subject: `NUL id ${id}`, messageId: `<nul\u0000${id}@example.com>`, body: 'One' });
    expect(first.duplicate).toBe(false);
    expect(await messageOf(first.message_id)).toMatchObject({ provider_message_id: `<nul${id}@example.com>` });
    expect(await stored(mode, { subject: `NUL id ${id}`, messageId: `<nul\u0000${id}@example.com>`, body: 'One' })).toEqual({
      ...first,
      duplicate: true,
    });

    const reply = await stored(mode, {
      subject: `Another subject ${id}`,
      messageId: `<reply-${id}@example.com>`,
      inReplyTo: `<nul\u0000${id}@example.com>`,
      body: 'Two',
    });
    expect(reply.thread_id).toBe(first.thread_id);
    expect(await messageOf(reply.message_id)).toMatchObject({ in_reply_to: `<nul${id}@example.com>` });
  });

  it('stores a NUL byte in In-Reply-To, and threads by a References chain whose id has one', async () => {
    const id = unique();
    const root = await stored(mode, { subject: `Root ${id}`, messageId: `<root-${id}@example.com>`, body: 'Root' });
    const byInReplyTo = await stored(mode, {
      subject: `In-Reply-To ${id}`,
      messageId: `<irt-${id}@example.com>`,
      inReplyTo: `<root-${id}@exa\u0000mple.com>`,
      body: 'Reply',
    });
    const byReferences = await stored(mode, {
      subject: `References ${id}`,
      messageId: `<refs-${id}@example.com>`,
      references: `<unknown-${id}@example.com> <ro\u0000ot-${id}@example.com>`,
      body: 'Reply',
    });
    expect([byInReplyTo.thread_id, byReferences.thread_id]).toEqual([root.thread_id, root.thread_id]);
    expect((await messageOf(byReferences.message_id)).references).toBe(`<unknown-${id}@example.com> <root-${id}@example.com>`);
  });

  it('stores a 4 KB random Subject (capped), and a reply of the same subject joins its thread', async () => {
    const subject = randomText(4096);
    const first = await stored(mode, { subject, messageId: `<long-subject-${unique()}@example.com>`, body: 'Long' });
    const message = await messageOf(first.message_id);
    expect(message.subject).toBe(subject.slice(0, 998));
    const reply = await stored(mode, { subject: `Re: ${subject}`, messageId: `<re-${unique()}@example.com>`, body: 'Re' });
    expect(reply.thread_id).toBe(first.thread_id);
  });

  it('stores a 4 KB Message-ID once, and a reply naming it joins its thread', async () => {
    const messageId = `<${randomText(4096)}@example.com>`;
    const first = await stored(mode, { subject: `Long id ${unique()}`, messageId, body: 'Long id' });
    const stored4k = (await messageOf(first.message_id)).provider_message_id as string;
    expect(Buffer.byteLength(stored4k)).toBeLessThanOrEqual(998);
    expect(stored4k.startsWith(messageId.slice(0, 900))).toBe(true);
    expect((await stored(mode, { subject: 'Again', messageId, body: 'Long id' })).duplicate).toBe(true);
    const reply = await stored(mode, {
      subject: `Unrelated ${unique()}`,
      messageId: `<re-${unique()}@example.com>`,
      inReplyTo: messageId,
      references: messageId,
      body: 'Re',
    });
    expect(reply.thread_id).toBe(first.thread_id);
  });

  it('stores mail with no Message-ID and `Date: not a date` at its receipt time, and a redelivery once', async () => {
    const mail = { subject: `Undated ${unique()}`, date: 'not a date', body: 'When?' };
    const before = Date.now();
    const first = await stored(mode, mail);
    const message = await messageOf(first.message_id);
    expect(Date.parse(message.timestamp)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(message.timestamp)).toBeLessThanOrEqual(Date.now());
    expect(message.provider_message_id).toMatch(/^<[0-9a-f]{40}\.no-message-id@inbox\.test>$/);
    expect(await stored(mode, mail)).toEqual({ ...first, duplicate: true });
  });

  it.each(['-100000-01-01T00:00:00Z', '-271821-04-20T00:00:00Z', 'Wed, 31 Dec 1969 23:59:59 +0000'])(
    'stores mail whose Date %s Postgres cannot hold (or no mail has) at its receipt time',
    async (date) => {
      const before = Date.now();
      const first = await stored(mode, {
        subject: `Old ${unique()}`,
        messageId: `<old-${unique()}@example.com>`,
        date,
        body: 'Old',
      });
      expect(Date.parse((await messageOf(first.message_id)).timestamp)).toBeGreaterThanOrEqual(before - 1000);
    },
  );

  it('stores a 900 KB folded Subject (capped), and a reply of the same subject joins its thread', async () => {
    const words = Array.from({ length: (900 * 1024) / 16 }, () => randomText(15));
    // Folded as a mail client folds a long header: CRLF and a space before the next line.
    const folded = words.reduce((text, word, index) => text + (index % 4 === 3 ? `\r\n ${word}` : ` ${word}`));
    const first = await stored(mode, { subject: folded, messageId: `<folded-${unique()}@example.com>`, body: 'Folded' });
    const message = await messageOf(first.message_id);
    expect(message.subject).toBe(words.join(' ').slice(0, 998));
    const reply = await stored(mode, { subject: `Re: ${folded}`, messageId: `<re-${unique()}@example.com>`, body: 'Re' });
    expect(reply.thread_id).toBe(first.thread_id);
  });
});

describe('POST /v1/messages with the longest subject the API takes', () => {
  it('sends 998 characters of emoji (201), and the recipient’s replies join the thread', async () => {
    // Emoji of the Basic Multilingual Plane, 3 bytes each in UTF-8: 2,994 bytes, in random order.
    const subject = Array.from({ length: 998 }, () => String.fromCodePoint(0x2190 + Math.floor(Math.random() * 0xa70))).join('');
    const sent = await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: agent.id, to: ['bob@example.com'], subject, body: 'Emoji' });
    expect(sent.status).toBe(201);
    expect(sent.body.subject).toBe(subject);
    const ourId = (await messageOf(sent.body.id)).provider_message_id as string;

    const byReference = await stored('mailgun body-mime', {
      subject: `Re: ${subject}`,
      messageId: `<emoji-reply-${unique()}@example.com>`,
      inReplyTo: ourId,
      body: 'Got it',
    });
    const bySubject = await stored('sendgrid raw', {
      subject: `=?UTF-8?B?${Buffer.from(`Re: ${subject}`).toString('base64')}?=`,
      messageId: `<emoji-subject-${unique()}@example.com>`,
      body: 'Me too',
    });
    expect([byReference.thread_id, bySubject.thread_id]).toEqual([sent.body.thread_id, sent.body.thread_id]);
    const again = await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: agent.id, to: ['bob@example.com'], subject, body: 'Again', reply_to_thread_id: sent.body.thread_id });
    expect({ status: again.status, thread: again.body.thread_id }).toEqual({ status: 201, thread: sent.body.thread_id });
  });
});

/** Raw MIME `raw` as Mailgun's body-mime posts it, or SendGrid's raw mode. */
const mailgunMime = (raw: string) =>
  request(ctx.app).post('/webhooks/mailgun').field('body-mime', raw).field('recipient', agent.email_address);
const summary = (res: request.Response) => ({ status: res.status, stored: res.body?.messages?.length });
const mid = () => `<${randomUUID()}@example.com>`;

describe('control characters in values other than the headers cleaned', () => {
  it('an attachment Content-Type with a NUL byte (raw MIME) is stored', async () => {
    const boundary = 'b1';
    const raw = [
      'From: bob@example.com',
      `To: ${agent.email_address}`,
      'Subject: nul content type',
      `Message-ID: ${mid()}`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary=${boundary}`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain',
      '',
      'body',
      `--${boundary}`,
      'Content-Type: application/x\u0000y; name="a.bin"',
      'Content-Disposition: attachment; filename="a.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('hello').toString('base64'),
      `--${boundary}--`,
      '',
    ].join('\r\n');
    const res = await mailgunMime(raw);
    expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
    const [file] = await ctx.db.attachment.findMany({ where: { messageId: res.body.messages[0].message_id as string } });
    expect(file!.contentType).toBe('application/xy');
  });

  it('SendGrid parsed fields: attachment-info type with a NUL byte is stored', async () => {
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .field('from', 'bob@example.com')
      .field('to', agent.email_address)
      .field('subject', 'nul type info')
      .field('text', 'hi')
      .field('headers', `Message-ID: ${mid()}\r\nFrom: bob@example.com\r\nTo: ${agent.email_address}`)
      .field('attachment-info', JSON.stringify({ attachment1: { filename: 'a.txt', type: 'text/pl\u0000ain' } }))
      .attach('attachment1', Buffer.from('hello'), { filename: 'a.txt', contentType: 'text/plain' });
    expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
  });

  it('SendGrid SPF field with a NUL byte (kept in metadata.authentication) is stored', async () => {
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .field('email', mimeMessage({ to: agent.email_address, subject: 'nul spf', messageId: mid(), body: 'hi' }))
      .field('envelope', JSON.stringify({ to: [agent.email_address] }))
      .field('SPF', 'pass\u0000x');
    expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
  });

  it('SES spamVerdict status with a lone surrogate is stored', async () => {
    const raw = mimeMessage({ to: agent.email_address, subject: 'surrogate verdict', messageId: mid(), body: 'hi' });
    const envelope = sesNotification(raw, {
      recipients: [agent.email_address],
      receipt: { spamVerdict: { status: 'PASS\ud800' } },
    });
    expect(summary(await postSns(ctx.app, envelope))).toMatchObject({ status: 200, stored: 1 });
  });

  it('SES spamVerdict status with a NUL is stored', async () => {
    const raw = mimeMessage({ to: agent.email_address, subject: 'nul verdict', messageId: mid(), body: 'hi' });
    const envelope = sesNotification(raw, {
      recipients: [agent.email_address],
      receipt: { spamVerdict: { status: 'PASS\u0000' } },
    });
    expect(summary(await postSns(ctx.app, envelope))).toMatchObject({ status: 200, stored: 1 });
  });
});

describe('search vector of a large text of distinct words', () => {
  it('3 MB of distinct words (text/plain) is stored, not 500', async () => {
    const words: string[] = [];
    for (let i = 0; i < 300_000; i++)
      words.push(
        randomBytes(5)
          .toString('hex')
          .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!),
      );
    const raw = mimeMessage({ to: agent.email_address, subject: 'many words', messageId: mid(), body: words.join(' ') });
    expect(summary(await mailgunMime(raw))).toMatchObject({ status: 200, stored: 1 });
  }, 60_000);
  it('a 1.5 MB text/plain body of base64 lines (a pasted blob) through SendGrid parsed fields is stored, not 500', async () => {
    const blob = randomBytes(1_100_000).toString('base64').replace(/.{76}/g, '$&\r\n');
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .field('headers', `Message-ID: ${mid()}\r\nFrom: bob@example.com\r\nTo: ${agent.email_address}`)
      .field('from', 'bob@example.com')
      .field('to', agent.email_address)
      .field('subject', 'a log')
      .field('text', blob);
    expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
  }, 60_000);
});
