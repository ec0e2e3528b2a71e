import request from 'supertest';
import { readAttachment } from '../../src/messages/attachments.js';
import { createTestContext, type TestContext } from '../context.js';
import { fixture, mimeMessage, multipartFixture } from './helpers.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function inbox(username: string): Promise<{ id: string; email_address: string }> {
  return (await request(ctx.app).post('/v1/inboxes').send({ name: username, email_username: username })).body;
}

/** A fixture with its recipient replaced by `to`, posted as SendGrid posts it. */
function postFixture(name: string, replace: Record<string, string>, app = ctx.app, path = '/webhooks/sendgrid') {
  const { body, contentType } = multipartFixture(`inbound/sendgrid/${name}`);
  let text = body.toString('latin1');
  for (const [from, to] of Object.entries(replace)) text = text.replaceAll(from, to);
  return request(app).post(path).set('content-type', contentType).send(Buffer.from(text, 'latin1'));
}

const onlyMessage = async (inboxId: string) => {
  const { items } = (await request(ctx.app).get(`/v1/messages?inbox_id=${inboxId}`)).body;
  expect(items).toHaveLength(1);
  return items[0];
};

describe('POST /webhooks/sendgrid', () => {
  it('stores the parsed-fields mode (python-default_data)', async () => {
    const target = await inbox('sg-default');
    const res = await postFixture('python-default_data.txt', { 'inbound@inbound.example.com': target.email_address });
    expect(res.status).toBe(200);
    expect(await onlyMessage(target.id)).toMatchObject({
      from_address: 'test@example.com',
      to_addresses: [target.email_address],
      subject: 'Testing non-raw',
      text: 'Hello Twilio SendGrid!\n',
      html: '<html><body><strong>Hello Twilio SendGrid!</body></html>\n',
      content_clean: '**Hello Twilio SendGrid!**',
      metadata: { authentication: { provider: 'sendgrid', spf: 'pass', dkim: 'pass' } },
      labels: ['received', 'unread'],
    });
  });

  it('stores the raw mode (python-raw_data)', async () => {
    const target = await inbox('sg-raw');
    const res = await postFixture('python-raw_data.txt', { 'inbound@inbound.inbound.com': target.email_address });
    expect(res.status).toBe(200);
    expect(await onlyMessage(target.id)).toMatchObject({
      from_address: 'test@example.com',
      subject: 'Inbound Parse Test Raw Data',
      content_clean: '**Hello Twilio SendGrid!**',
    });
  });

  it('keeps the attachment of the raw mode byte for byte (python-raw_data_with_attachments)', async () => {
    const target = await inbox('sg-attachment');
    const res = await postFixture('python-raw_data_with_attachments.txt', {
      'inbound@inbound.inbound.com': target.email_address,
    });
    expect(res.status).toBe(200);
    const message = await onlyMessage(target.id);
    const [attachment] = await ctx.db.attachment.findMany({ where: { messageId: message.id } });
    expect(attachment).toMatchObject({ filename: 'SendGrid.jpg', contentType: 'image/jpeg', disposition: 'attachment' });
    // The JPEG in the fixture, decoded from its base64 part.
    const raw = fixture('inbound/sendgrid/python-raw_data_with_attachments.txt').toString('latin1');
    const part = raw.slice(raw.indexOf('filename="SendGrid.jpg"'));
    const base64 = part.slice(part.indexOf('\n\n') + 2, part.indexOf('\n--')).replace(/\s+/g, '');
    const expected = Buffer.from(base64, 'base64');
    expect(await readAttachment(ctx.deps.storage, attachment!)).toEqual(expected);
    expect(attachment!.size).toBe(expected.length);
    expect(expected.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });

  it('stores a real Gmail reply with its threading headers and spam score (nodejs example)', async () => {
    const target = await inbox('sg-reply');
    const res = await postFixture('nodejs-example-email-parse-payload.txt', {
      'test@parse.ashleyroach.com': target.email_address,
    });
    expect(res.status).toBe(200);
    expect(await onlyMessage(target.id)).toMatchObject({
      from_address: 'aroach@gmail.com',
      subject: 'Fwd: testing webhook parse',
      provider_message_id: '<CAGsruKuAJk58E07TRMD28pA+mktpZ1mg2fjr6PAWj19e0jdnFg@mail.gmail.com>',
      in_reply_to: '<CAGsruKux7HKgwztSSWCae8cMu71_pzgziWZRWYeYNo3aiCkjRw@mail.gmail.com>',
      references: '<CAGsruKux7HKgwztSSWCae8cMu71_pzgziWZRWYeYNo3aiCkjRw@mail.gmail.com>',
      timestamp: '2018-10-09T03:15:50.000Z',
      metadata: { authentication: { provider: 'sendgrid', spf: 'pass', dkim: 'pass', spam_score: 0.022 } },
      labels: ['received', 'unread'],
    });
  });

  it('decodes parsed fields in the charsets SendGrid names, and keeps attachments of that mode', async () => {
    const target = await inbox('sg-charsets');
    const boundary = 'b0undary';
    const part = (name: string, value: Buffer | string, file?: { filename: string; type: string }) =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file ? `; filename="${file.filename}"\r\nContent-Type: ${file.type}` : ''}\r\n\r\n`,
        ),
        Buffer.isBuffer(value) ? value : Buffer.from(value),
        Buffer.from('\r\n'),
      ]);
    const pdf = Buffer.from('%PDF-1.4\n\u0000\u00ff binary', 'latin1');
    const body = Buffer.concat([
      part(
        'headers',
        `From: =?ISO-8859-1?Q?Ren=E9?= <rene@example.fr>\r\nTo: ${target.email_address}\r\nMessage-ID: <latin-1@example.fr>\r\nSubject: x\r\n`,
      ),
      part('from', Buffer.from('René <rene@example.fr>', 'latin1')),
      part('to', target.email_address),
      part('subject', Buffer.from('Grüße aus Köln', 'latin1')),
      part('text', Buffer.from('Ça va très bien, merci.', 'latin1')),
      part('charsets', JSON.stringify({ from: 'iso-8859-1', to: 'UTF-8', subject: 'iso-8859-1', text: 'windows-1252' })),
      part('envelope', JSON.stringify({ to: [target.email_address], from: 'rene@example.fr' })),
      part('attachments', '1'),
      part('attachment-info', JSON.stringify({ attachment1: { filename: 'Rechnung März.pdf', type: 'application/pdf' } })),
      part('attachment1', pdf, { filename: 'Rechnung M?rz.pdf', type: 'application/pdf' }),
      part('SPF', 'softfail'),
      part('dkim', 'none'),
      part('spam_score', '6.4'),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .set('content-type', `multipart/form-data; boundary=${boundary}`)
      .send(body);
    expect(res.status).toBe(200);
    const message = await onlyMessage(target.id);
    expect(message).toMatchObject({
      from_address: 'rene@example.fr',
      subject: 'Grüße aus Köln',
      text: 'Ça va très bien, merci.',
      content_clean: 'Ça va très bien, merci.',
      provider_message_id: '<latin-1@example.fr>',
      labels: ['received', 'unread', 'spam', 'unauthenticated'],
      metadata: { authentication: { spf: 'softfail', dkim: 'none', spam_score: 6.4 } },
    });
    const [attachment] = await ctx.db.attachment.findMany({ where: { messageId: message.id } });
    expect(attachment).toMatchObject({ filename: 'Rechnung März.pdf', contentType: 'application/pdf', size: pdf.length });
    expect(await readAttachment(ctx.deps.storage, attachment!)).toEqual(pdf);
  });

  it('reads JSON bodies with the same field names', async () => {
    const target = await inbox('sg-json');
    const email = mimeMessage({
      to: target.email_address,
      subject: 'As JSON',
      body: 'Posted as JSON',
      messageId: '<json-1@example.com>',
    });
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .send({ email, envelope: JSON.stringify({ to: [target.email_address] }) });
    expect(res.status).toBe(200);
    expect(await onlyMessage(target.id)).toMatchObject({ subject: 'As JSON', content_clean: 'Posted as JSON' });
  });

  it.each([
    ['a multipart body without a boundary', 'multipart/form-data', 'x'],
    [
      'a multipart body that is cut off',
      'multipart/form-data; boundary=abc',
      '--abc\r\nContent-Disposition: form-data; name="email"\r\n\r\nFrom: a',
    ],
    [
      'a form with neither raw mail nor parsed fields',
      'multipart/form-data; boundary=abc',
      '--abc\r\nContent-Disposition: form-data; name="hello"\r\n\r\nworld\r\n--abc--\r\n',
    ],
    [
      'raw mail that is no mail',
      'multipart/form-data; boundary=abc',
      '--abc\r\nContent-Disposition: form-data; name="email"\r\n\r\njust some words\r\n--abc--\r\n',
    ],
    ['JSON that is an array', 'application/json', '[1, 2]'],
  ])('answers 400 for %s, storing nothing', async (_case, type, body) => {
    const before = await ctx.db.message.count();
    const res = await request(ctx.app).post('/webhooks/sendgrid').set('content-type', type).send(body);
    expect(res.status).toBe(400);
    expect(await ctx.db.message.count()).toBe(before);
  });
});

describe('the SendGrid secret (SENDGRID_INBOUND_TOKEN set)', () => {
  it('is needed as ?token= or as the basic-auth password; a wrong or missing one is 401', async () => {
    const guarded = await ctx.replica({ SENDGRID_INBOUND_TOKEN: 's3cret-token' });
    try {
      const target = await inbox('sg-guarded');
      const post = (path: string, auth?: string) => {
        const req = postFixture(
          'python-raw_data.txt',
          { 'inbound@inbound.inbound.com': target.email_address },
          guarded.app,
          path,
        );
        return auth ? req.set('authorization', auth) : req;
      };
      const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      expect((await post('/webhooks/sendgrid')).status).toBe(401);
      expect((await post('/webhooks/sendgrid?token=wrong')).status).toBe(401);
      expect((await post('/webhooks/sendgrid', basic('sendgrid', 'wrong'))).status).toBe(401);
      expect((await post('/webhooks/sendgrid', 'Bearer s3cret-token')).status).toBe(401);
      expect(await ctx.db.message.count({ where: { inboxId: target.id } })).toBe(0);
      expect((await post('/webhooks/sendgrid?token=s3cret-token')).status).toBe(200);
      expect((await post('/webhooks/sendgrid', basic('sendgrid', 's3cret-token'))).body.messages[0].duplicate).toBe(true);
    } finally {
      await guarded.close();
    }
  });
});
