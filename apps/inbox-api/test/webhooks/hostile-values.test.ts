/**
 * Inbound mail whose values the database refuses as sent: a Date before any Postgres holds, NUL
 * bytes and lone surrogates in content types and provider verdicts, a text body whose full-text
 * vector would pass Postgres's 1 MB. Each answered 500 and stored nothing (a provider then drops
 * the mail or retries it forever); each must be stored, through every provider it can come by.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestContext, type TestContext } from '../context.js';
import { mimeMessage, postSns, sesNotification } from './helpers.js';

jest.setTimeout(120_000);

let ctx: TestContext;
let agent: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  agent = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Agent', email_username: 'values' })).body;
});
afterAll(() => ctx.close());

const mid = () => `<${randomUUID()}@example.com>`;

function mailgunMime(raw: string | Buffer) {
  return request(ctx.app).post('/webhooks/mailgun').field('body-mime', raw.toString()).field('recipient', agent.email_address);
}
function sendgridRaw(raw: string | Buffer) {
  return request(ctx.app)
    .post('/webhooks/sendgrid')
    .field('email', raw.toString())
    .field('envelope', JSON.stringify({ to: [agent.email_address] }));
}
function ses(raw: string | Buffer) {
  return postSns(ctx.app, sesNotification(raw, { recipients: [agent.email_address], encoding: 'BASE64' }));
}

const summary = (res: request.Response) => ({
  status: res.status,
  stored: res.body?.messages?.length,
  error: res.body?.error?.message,
});

describe('control', () => {
  it('a plain mail is stored through mailgun, sendgrid and ses', async () => {
    for (const post of [mailgunMime, sendgridRaw, ses]) {
      const raw = mimeMessage({ to: agent.email_address, subject: 'control', messageId: mid(), body: 'hi' });
      expect(summary(await post(raw))).toMatchObject({ status: 200, stored: 1 });
    }
  });
});

describe('Date header outside what Postgres holds', () => {
  it.each([['-100000-01-01T00:00:00Z'], ['-271821-04-20T00:00:00Z']])(
    'Date: %s through mailgun body-mime is stored (receipt time), not 500',
    async (date) => {
      const raw = mimeMessage({ to: agent.email_address, subject: 'old date', messageId: mid(), date, body: 'hi' });
      const before = Date.now();
      const res = await mailgunMime(raw);
      expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
      const stored = await ctx.db.message.findUniqueOrThrow({ where: { id: res.body.messages[0].message_id as string } });
      expect(stored.timestamp.getTime()).toBeGreaterThanOrEqual(before - 1000);
    },
  );
  it('Date: -100000-01-01T00:00:00Z through sendgrid raw', async () => {
    const raw = mimeMessage({
      to: agent.email_address,
      subject: 'old date sg',
      messageId: mid(),
      date: '-100000-01-01T00:00:00Z',
      body: 'hi',
    });
    expect(summary(await sendgridRaw(raw))).toMatchObject({ status: 200, stored: 1 });
  });
  it('Date: -100000-01-01T00:00:00Z through ses', async () => {
    const raw = mimeMessage({
      to: agent.email_address,
      subject: 'old date ses',
      messageId: mid(),
      date: '-100000-01-01T00:00:00Z',
      body: 'hi',
    });
    expect(summary(await ses(raw))).toMatchObject({ status: 200, stored: 1 });
  });
  it('Date: -100000-01-01T00:00:00Z through mailgun parsed fields', async () => {
    const res = await request(ctx.app)
      .post('/webhooks/mailgun')
      .type('form')
      .send(
        new URLSearchParams({
          recipient: agent.email_address,
          from: 'bob@example.com',
          subject: 'old date fields',
          'body-plain': 'hi',
          'message-headers': JSON.stringify([
            ['From', 'bob@example.com'],
            ['To', agent.email_address],
            ['Message-Id', mid()],
            ['Date', '-100000-01-01T00:00:00Z'],
          ]),
        }).toString(),
      );
    expect(summary(res)).toMatchObject({ status: 200, stored: 1 });
  });
});

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
  });
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
  });
});
